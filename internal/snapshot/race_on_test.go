//go:build race

package snapshot

// raceEnabled: the race detector slows decoding ~10x; the bit-flip tests
// flip fewer bits under it.
const raceEnabled = true
