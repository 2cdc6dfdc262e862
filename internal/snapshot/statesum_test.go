package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// stateReader is one reader of a state dir, as a command reads it: what
// it read, as a value to compare, or the error it stops on; files are
// the state files it opens (patterns).
type stateReader struct {
	name  string
	files []string
	read  func(dir string) (any, error)
}

// opens says whether the reader opens the state file name.
func (r stateReader) opens(name string) bool {
	for _, pat := range r.files {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// stateReaders are the readers of a state dir's files besides the two
// indexes (TestIndexBitFlips holds gate-<ns>.idx and baseline.idx): the
// gate's (LoadForGate, with the totals it reads when a table changed),
// the sweep's (Load, the fabric, the baseline as it reads it), and
// baseline accept's record of the last sweep.
func stateReaders() []stateReader {
	return []stateReader{
		{"gate", []string{FileName, "census-*.json", "verdicts-*.json", "totals-*.bin"}, func(dir string) (any, error) {
			s, err := LoadForGate(dir)
			if err != nil {
				return nil, err
			}
			defer s.Close()
			doc, _ := json.Marshal(s)
			v, _ := json.Marshal(s.FabricVerdicts())
			c, _ := json.Marshal(s.hcas)
			t, err := s.PortTotals()
			if err != nil {
				return nil, err
			}
			if t == nil {
				return fmt.Sprintf("%s\n%s\n%s\nno totals", doc, v, c), nil
			}
			return fmt.Sprintf("%s\n%s\n%s\n%x %x", doc, v, c, t.LIDs, t.Switches), nil
		}},
		{"sweep", []string{FileName, "fabric-*.json.gz", "verdicts-*.json"}, func(dir string) (any, error) {
			s, err := Load(dir)
			if err != nil {
				return nil, err
			}
			defer s.Close()
			f, err := s.FabricModel()
			if err != nil {
				return nil, err
			}
			doc, _ := json.Marshal(s)
			v, _ := json.Marshal(s.FabricVerdicts())
			j, _ := fabric.Marshal(f)
			return fmt.Sprintf("%s\n%s\n%s", doc, v, j), nil
		}},
		// baseline.topo holds the size and CRC-32C of baseline.json.gz.
		{"sweep's baseline.topo", []string{BaselineTopologyName, BaselineName}, func(dir string) (any, error) {
			return LoadBaselineTopology(dir)
		}},
		{"baseline", []string{BaselineName}, func(dir string) (any, error) {
			f, err := LoadBaseline(dir)
			if err != nil {
				return nil, err
			}
			j, _ := fabric.Marshal(f)
			return string(j), nil
		}},
		{"accept's last sweep", []string{LastSweepName}, func(dir string) (any, error) {
			return LoadLastSweep(dir)
		}},
	}
}

// flippedState is a saved state dir with every file a sweep writes:
// snapshot.json, the fabric, gate.idx, census, verdicts (with numbers a
// flipped digit changes), totals, the baseline files and last-sweep.json.
func flippedState(t *testing.T) string {
	t.Helper()
	f := routedTree(t)
	v, err := checks.RunFabricWide(&checks.Snapshot{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	if v.PortTotals == nil {
		t.Fatal("RunFabricWide made no totals")
	}
	v.MasterLIDs = map[string]uint16{"the master SM's LID 45 is held by no port": 45}
	v.NotJudged = map[string]string{"sm.stalled": "one SMInfo read"}
	taken := time.Date(2026, 11, 27, 20, 1, 2, 345678901, time.UTC)
	s, err := New(f, nil, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	s.Counters = testCounters(f)
	s.SetFabricVerdicts(v)
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if s.CensusFile == "" || s.VerdictsFile == "" || s.TotalsFile == "" || s.IndexFile == "" {
		t.Fatalf("a file is missing: %+v", s)
	}
	if err := SaveBaseline(dir, f, "sim:test", true); err != nil {
		t.Fatal(err)
	}
	if err := SaveLastSweep(dir, LastSweep{TakenAt: taken, Source: "sim:test", Complete: true, Saved: true}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// flipBits are the bits of a file of n bytes a test flips: every bit of
// its first and last edge bytes (headers, trailers, checksums), and
// every stride-th bit between.
func flipBits(n, edge, stride int) []int {
	var bits []int
	for bit := 0; bit < 8*n; bit++ {
		if bit < 8*edge || bit >= 8*(n-edge) || bit%stride == 0 {
			bits = append(bits, bit)
		}
	}
	return bits
}

// TestStateFileBitFlips (review: the JSON state files and totals-<ns>.bin
// carried no checksum): no single flipped bit of a state file is read
// silently as another state. For every file of a state dir but the two
// indexes (TestIndexBitFlips), and many bits of each, every reader either
// stops on an error naming the file — the gate then sweeps itself, a
// sweep ignores the previous snapshot, a switch needing the totals is
// undecided — or reads what it read of the undamaged file. Each flip is
// read by the readers that open the file.
func TestStateFileBitFlips(t *testing.T) {
	dir := flippedState(t)
	readers := stateReaders()
	want := make([]any, len(readers))
	for i, r := range readers {
		v, err := r.read(dir)
		if err != nil {
			t.Fatalf("%s, undamaged: %v", r.name, err)
		}
		want[i] = v
	}
	edge, stride := 32, 11
	if testing.Short() || raceEnabled {
		edge, stride = 12, 53
	}
	covered := map[string]bool{}
	for _, name := range stateFiles(t, dir) {
		if name == LockName || name == BaselineIndexName || isIndexFile(name) {
			continue // the lock holds a pid; the indexes: TestIndexBitFlips
		}
		covered[name] = true
		var opening []int
		for i, r := range readers {
			if r.opens(name) {
				opening = append(opening, i)
			}
		}
		if len(opening) == 0 {
			t.Errorf("%s: no reader opens it (a state file without its reader here)", name)
		}
		path := filepath.Join(dir, name)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		changed := 0
		for _, bit := range flipBits(len(good), edge, stride) {
			bad := append([]byte(nil), good...)
			bad[bit/8] ^= 1 << (bit % 8)
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			what := "same"
			for _, i := range opening {
				r := readers[i]
				got, err := r.read(dir)
				switch {
				case err != nil && (!strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n")):
					t.Errorf("%s: bit %d (byte %d): %s refused in words not naming the file on one line: %v", name, bit, bit/8, r.name, err)
				case err != nil:
					what = "refused"
				case !reflect.DeepEqual(got, want[i]):
					if changed++; changed <= 3 {
						t.Errorf("%s: bit %d (byte %d, %q): %s read another state, nothing said", name, bit, bit/8, good[bit/8], r.name)
					}
					what = "CHANGED"
				}
				if what == "CHANGED" {
					break
				}
			}
			count[what]++
		}
		if err := os.WriteFile(path, good, 0o644); err != nil {
			t.Fatal(err)
		}
		if changed > 0 {
			t.Errorf("%s: %d of %d flipped bits changed what was read, nothing said", name, changed, count["CHANGED"]+count["refused"]+count["same"])
		}
		t.Logf("%s (%d bytes): %v", name, len(good), count)
	}
	for _, name := range []string{FileName, LastSweepName, BaselineName, BaselineTopologyName} {
		if !covered[name] {
			t.Errorf("%s was not flipped", name)
		}
	}
	for _, pat := range []string{"fabric-*.json.gz", "census-*.json", "verdicts-*.json", "totals-*.bin"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) != 1 {
			t.Errorf("%s: %v", pat, m)
		}
	}
}

// unsealed is a sealed state file as an ibdoctor before the checksums
// wrote it: the JSON without its crc32c member, totals as IBDTOT2.
func unsealed(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	if strings.HasPrefix(name, "totals-") {
		return append([]byte(totalsMagicV2), data[len(totalsMagic):len(data)-4]...)
	}
	if !strings.HasSuffix(name, ".json") {
		return data
	}
	body := bytes.Clone(data[:len(data)-sumTail])
	body[len(body)-1] = '}'
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s without its checksum: %v", name, err)
	}
	return body
}

// TestStateFilesWithoutSums: the state files of an ibdoctor before the
// checksums (JSON without the crc32c member, totals IBDTOT2) are read as
// before, unchecked (docs/schema-snapshot.md); a sealed JSON file
// rewritten by a tool (jq, an editor: its member then is not the last
// bytes as written) is refused naming the file, not read unchecked.
func TestStateFilesWithoutSums(t *testing.T) {
	dir := flippedState(t)
	readers := stateReaders()
	want := make([]any, len(readers))
	for i, r := range readers {
		v, err := r.read(dir)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		want[i] = v
	}
	old := t.TempDir()
	for _, name := range stateFiles(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, name), unsealed(t, name, data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range readers {
		got, err := r.read(old)
		if err != nil {
			t.Errorf("%s of files without checksums: %v", r.name, err)
		} else if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s of files without checksums read another state", r.name)
		}
	}
	readBy := map[string][]string{FileName: {"gate", "sweep"}, LastSweepName: {"accept's last sweep"}}
	for _, name := range []string{FileName, LastSweepName} {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := json.Indent(&out, data, "", "  "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, r := range readers {
			_, err := r.read(dir)
			switch {
			case err != nil && !strings.Contains(err.Error(), name+" fails its checksum"):
				t.Errorf("%s re-indented: %s: %v", name, r.name, err)
			case err == nil && slices.Contains(readBy[name], r.name):
				t.Errorf("%s re-indented: %s read it unchecked", name, r.name)
			}
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzSealedJSON: a byte of a sealed snapshot.json changed anywhere is
// refused (checkJSON or the decoding), or decodes to what was written.
func FuzzSealedJSON(f *testing.F) {
	taken := time.Date(2026, 11, 27, 20, 1, 2, 345678901, time.UTC)
	doc := Snapshot{Schema: Schema, TakenAt: taken, Source: "sim:x", Complete: true, FabricFile: fabricFileName(taken), IndexFile: indexFileName(taken), Unanswered: []FarEnd{{Path: "0,1,4", FromGUID: "0x000000000000002a", FromPort: 7, Reason: "timeout"}}}
	plain, err := json.Marshal(&doc)
	if err != nil {
		f.Fatal(err)
	}
	sealed := sealJSON(plain)
	var want Snapshot
	if err := checkJSON(sealed); err != nil {
		f.Fatal(err)
	}
	if err := json.Unmarshal(sealed, &want); err != nil {
		f.Fatal(err)
	}
	wantJSON, _ := json.Marshal(&want)
	f.Add(uint32(20), byte(1))
	f.Add(uint32(len(sealed)-sumTail), byte(0x20))
	f.Add(uint32(len(sealed)-sumTail+3), byte(0x20))
	f.Add(uint32(len(sealed)-2), byte(0xff))
	f.Add(uint32(len(sealed)-1), byte(0x0a))
	f.Fuzz(func(t *testing.T, at uint32, mask byte) {
		data := bytes.Clone(sealed)
		data[int(at)%len(data)] ^= mask
		if checkJSON(data) != nil {
			return
		}
		var got Snapshot
		if json.Unmarshal(data, &got) != nil {
			return
		}
		if j, _ := json.Marshal(&got); !bytes.Equal(j, wantJSON) {
			t.Fatalf("byte %d ^ %#x read as another snapshot:\n%s", int(at)%len(data), mask, j)
		}
	})
}

// BenchmarkStateSums8k is what the checksums of the JSON state files and
// totals-<ns>.bin cost on FatTree8k (9,472 nodes, every port's counters,
// the fabric-wide verdicts and totals of its own tables): per file, the
// checksum alone (sum, the same work writing and reading it) beside the
// reader's whole decoding of it (read), and the state's bytes per node
// with them.
func BenchmarkStateSums8k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	v, err := checks.RunFabricWide(&checks.Snapshot{Fabric: f})
	if err != nil {
		b.Fatal(err)
	}
	taken := time.Now()
	s, err := New(f, everyPort{f}, taken, "sim:bench", "bench", true)
	if err != nil {
		b.Fatal(err)
	}
	s.SetFabricVerdicts(v)
	dir := b.TempDir()
	if _, err := s.Save(dir); err != nil {
		b.Fatal(err)
	}
	if err := SaveBaseline(dir, f, "sim:bench", false); err != nil {
		b.Fatal(err)
	}
	taken = s.TakenAt
	var total int64
	for _, name := range stateFiles(b, dir) {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		total += int64(len(data))
		var sum, read func() error
		switch {
		case name == FileName:
			sum = func() error { return checkJSON(data) }
			read = func() error { _, _, err := readDoc(path); return err }
		case strings.HasPrefix(name, "census-"):
			sum = func() error { return checkJSON(data) }
			read = func() error { _, err := decodeCensus(data, path, taken); return err }
		case strings.HasPrefix(name, "verdicts-"):
			sum = func() error { return checkJSON(data) }
			read = func() error {
				fh, err := os.Open(path)
				if err != nil {
					return err
				}
				_, err = decodeVerdicts(fh, taken)
				return err
			}
		case strings.HasPrefix(name, "totals-"):
			sum = func() error {
				if crc32.Checksum(data[:len(data)-4], castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
					return errSum
				}
				return nil
			}
			read = func() error { _, err := decodeTotals(data, taken); return err }
		default:
			continue
		}
		kind, _, _ := strings.Cut(name, "-")
		b.Logf("%s: %d bytes", kind, len(data))
		b.Run(kind+"/sum", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := sum(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(kind+"/read", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Logf("state %.1f B/node (%d bytes, %d nodes)", float64(total)/float64(len(f.Nodes)), total, len(f.Nodes))
}

// resealed is the sealed JSON state file data edited by edit (given and
// giving the JSON without the checksum member) and sealed again: a state
// the sweep could have written, for tests of what readers make of it.
func resealed(data []byte, edit func([]byte) []byte) []byte {
	body := bytes.Clone(data)
	if checkJSON(data) == nil && len(data) > sumTail && string(data[len(data)-sumTail:len(data)-sumTail+len(sumKey)]) == sumKey {
		body = body[:len(body)-sumTail]
		body[len(body)-1] = '}'
	}
	return sealJSON(edit(body))
}
