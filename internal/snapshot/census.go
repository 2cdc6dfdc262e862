package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// The census file (census-<time>.json, named by snapshot.json's
// census_file) keeps the sweep's summary of the whole fabric's host
// adapters (checks.HCASummary): with it a gate looks up only its part's
// hosts in gate.idx for topology.missing-hca, instead of reading every
// CA record and grouping every host of the fabric. A state dir without
// it (an older ibdoctor's) is judged on the census built from gate.idx,
// the slower way to the same verdict.

// censusDoc is the census file.
type censusDoc struct {
	Taken time.Time          `json:"taken_at"`
	HCAs  *checks.HCASummary `json:"hcas"`
}

// maxCensus bounds the census file a gate reads (a few bytes per host
// port of every leaf).
const maxCensus = 64 << 20

func censusFileName(taken time.Time) string {
	return fmt.Sprintf("census-%d.json", taken.UnixNano())
}

// encodeCensus is the census file of f's sweep taken at taken, or nil
// when gate.idx could not look up every host adapter of f by its host
// (a description whose words a space does not part, such as a tab):
// the gate then builds the census from gate.idx's records, which finds
// them all.
func encodeCensus(f *fabric.Fabric, taken time.Time) ([]byte, error) {
	census := []checks.HostHCA{} // checks.HCACensus(f), each entry checked
	for _, n := range f.Nodes {
		h, ok := checks.CensusEntry(n)
		if !ok {
			continue
		}
		if fabric.HostName(hostKey(n.Description)) != h.Host {
			return nil, nil
		}
		census = append(census, h)
	}
	data, err := json.Marshal(&censusDoc{Taken: taken.UTC(), HCAs: checks.SummarizeHCAs(census)})
	if err != nil {
		return nil, err
	}
	return sealJSON(data), nil
}

// readCensus reads the census file name in dir of the sweep taken at
// taken.
func readCensus(dir, name string, taken time.Time) (*checks.HCASummary, error) {
	fh, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxCensus+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return decodeCensus(data, filepath.Join(dir, name), taken)
}

// decodeCensus decodes a census file read from path.
func decodeCensus(data []byte, path string, taken time.Time) (*checks.HCASummary, error) {
	if len(data) > maxCensus {
		return nil, fmt.Errorf("snapshot: %s is over %d MB: run 'ibdoctor sweep' again", path, maxCensus>>20)
	}
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("snapshot: %s %v: run 'ibdoctor sweep' again", path, err)
	}
	var c censusDoc
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("snapshot: %s is not valid JSON (%v): run 'ibdoctor sweep' again", path, err)
	}
	if !c.Taken.Equal(taken) {
		return nil, goneError{fmt.Sprintf("%s is of the sweep taken at %s, %s of the one at %s", filepath.Base(path), c.Taken.UTC().Format(time.RFC3339Nano), FileName, taken.UTC().Format(time.RFC3339Nano))}
	}
	if c.HCAs == nil || c.HCAs.Kinds == nil {
		return nil, fmt.Errorf("snapshot: %s holds no census: run 'ibdoctor sweep' again", path)
	}
	return c.HCAs, nil
}

// HCASummary is the sweep's summary of the whole fabric's host adapters
// and a lookup of one host's in gate.idx, which together stand for
// HCACensus in topology.missing-hca; nil, nil when the state has no
// census file (an older ibdoctor's sweep, or a snapshot read without
// gate.idx): HCACensus then gives the whole census.
func (s *Snapshot) HCASummary() (*checks.HCASummary, checks.HCALookup) {
	if s.hcas == nil || s.idx == nil {
		return nil, nil
	}
	return s.hcas, s.idx.HCALookup()
}
