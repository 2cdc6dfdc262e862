package report

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"testing"
)

// TestWriteTableFuncIsWriteTable: a table whose rows are made on demand
// is byte for byte the table WriteTable wrote of the same rows held
// before the two shared one body (testdata/tables-561534f.golden, written
// by 561534f's WriteTable from this generator), at any width, with
// columns cut, dropped, wrapped, or moved under their rows. (Comparing
// the two as they are now compared one body with itself: review R5.)
func TestWriteTableFuncIsWriteTable(t *testing.T) {
	golden, err := os.ReadFile("testdata/tables-561534f.golden")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(7))
	words := []string{"leaf01/3", "gpu017 mlx5_1/1", "4X NDR", "0", "12.5%", "error errors", "Quantum-2 Mellanox Technologies (0xb0cf0e0300e5b940)/12", "-", "…", "héllo wörld of ports"}
	var held, made bytes.Buffer
	for trial := range 40 {
		cols := []Column{{Header: "PORT"}, {Header: "FAR END", Min: 12}, {Header: "RATE", Drop: 2}, {Header: "ERR/s"}, {Header: "NOTE", Min: 10, Wrap: trial%2 == 0}}
		rows := make([][]string, r.Intn(20))
		for i := range rows {
			for range len(cols) - r.Intn(2) {
				rows[i] = append(rows[i], words[r.Intn(len(words))]+fmt.Sprint(r.Intn(1000)))
			}
		}
		width := []int{0, 40, 60, 80, 120}[r.Intn(5)]
		head := fmt.Sprintf("== trial %d, width %d\n", trial, width)
		held.WriteString(head)
		made.WriteString(head)
		if err := WriteTable(&held, width, cols, rows); err != nil {
			t.Fatal(err)
		}
		if err := WriteTableFunc(&made, width, cols, len(rows), func(i int) []string { return rows[i] }); err != nil {
			t.Fatal(err)
		}
	}
	for name, got := range map[string][]byte{"WriteTableFunc": made.Bytes(), "WriteTable": held.Bytes()} {
		if !bytes.Equal(got, golden) {
			at := 0
			for at < min(len(got), len(golden)) && got[at] == golden[at] {
				at++
			}
			t.Errorf("%s differs from 561534f's tables at byte %d:\n%s\nwant\n%s", name, at, got[max(0, at-200):min(len(got), at+200)], golden[max(0, at-200):min(len(golden), at+200)])
		}
	}
}
