//go:build race

package cli

// raceEnabled: the race detector slows the simulator ~3x; long
// interleaving tests run fewer rounds under it.
const raceEnabled = true
