package checks

import (
	"strings"
	"testing"
)

// firmwareDefaultSeeds are descriptions firmware and operators write, and
// the edges of the expression (digit counts, word boundaries, a newline).
var firmwareDefaultSeeds = []string{
	"MT4129 ConnectX7   Mellanox Technologies", "MT23108 InfiniHost Mellanox Technologies", "Quantum-2 Mellanox Technologies",
	"Mellanox Technologies Aggregation Node", "MF0;switch-abc:MQM8700/U1", "gpu001 mlx5_0", "gpu001.cluster.local mlx5_3",
	"MT123", "MT1234", "MT1234567", "MT12345x", "MT123456-", "MT4129", " MT4129 \t", "xMT4129", "NVIDIA", "xNVIDIA", "x NVIDIA ",
	"SwitchIB NVIDIA\n", "a\nNVIDIA", "MT4129\nx", "NVIDIA\u00a0", "é NVIDIA", "\xffNVIDIA", "_Mellanox Technologies", "",
	"Mellanox Technologies\r", "MT4129\u00e9", "leaf01", "spine02 Mellanox Technologies Quantum",
}

// FuzzFirmwareDefault: the fast path of isFirmwareDefault says what the
// expression says, for any description.
func FuzzFirmwareDefault(f *testing.F) {
	for _, s := range firmwareDefaultSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		if got, want := isFirmwareDefault(desc), firmwareDefault.MatchString(strings.TrimSpace(desc)); got != want {
			t.Errorf("isFirmwareDefault(%q) = %v, the expression says %v", desc, got, want)
		}
	})
}

// BenchmarkIsFirmwareDefault is one call over the seeds (several per node
// of a fabric in a check or gate).
func BenchmarkIsFirmwareDefault(b *testing.B) {
	for b.Loop() {
		for _, s := range firmwareDefaultSeeds {
			isFirmwareDefault(s)
		}
	}
}
