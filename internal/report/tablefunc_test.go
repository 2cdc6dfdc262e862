package report

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// TestWriteTableFuncIsWriteTable: a table whose rows are made on demand
// is byte for byte the table of the same rows held, at any width, with
// columns cut, dropped, wrapped, or moved under their rows.
func TestWriteTableFuncIsWriteTable(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	words := []string{"leaf01/3", "gpu017 mlx5_1/1", "4X NDR", "0", "12.5%", "error errors", "Quantum-2 Mellanox Technologies (0xb0cf0e0300e5b940)/12", "-", "…", "héllo wörld of ports"}
	for trial := range 300 {
		cols := []Column{{Header: "PORT"}, {Header: "FAR END", Min: 12}, {Header: "RATE", Drop: 2}, {Header: "ERR/s"}, {Header: "NOTE", Min: 10, Wrap: trial%2 == 0}}
		rows := make([][]string, r.Intn(20))
		for i := range rows {
			for range len(cols) - r.Intn(2) {
				rows[i] = append(rows[i], words[r.Intn(len(words))]+fmt.Sprint(r.Intn(1000)))
			}
		}
		width := []int{0, 40, 60, 80, 120}[r.Intn(5)]
		var held, made bytes.Buffer
		if err := WriteTable(&held, width, cols, rows); err != nil {
			t.Fatal(err)
		}
		if err := WriteTableFunc(&made, width, cols, len(rows), func(i int) []string { return rows[i] }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(held.Bytes(), made.Bytes()) {
			t.Fatalf("trial %d, width %d: made on demand\n%s\nheld\n%s", trial, width, made.Bytes(), held.Bytes())
		}
	}
}
