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

	"github.com/ibdoctor/ibdoctor/internal/outfile"
)

// LastSweepName records the state directory's last sweep, saved or not:
// a partial sweep does not replace a complete snapshot, so snapshot.json
// alone cannot say that a newer sweep could not read everything, and
// `baseline accept` would accept the older sweep without a word.
const LastSweepName = "last-sweep.json"

// LastSweep is the last sweep of a state directory.
type LastSweep struct {
	TakenAt  time.Time `json:"taken_at"`
	Source   string    `json:"source"`
	Complete bool      `json:"complete"`
	// Saved says snapshot.json is this sweep's.
	Saved bool `json:"saved"`
}

// SaveLastSweep records l in dir, atomically.
func SaveLastSweep(dir string, l LastSweep) error {
	data, err := json.Marshal(&l)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := outfile.WriteHere(filepath.Join(dir, LastSweepName), func(w io.Writer) error {
		_, err := w.Write(sealJSON(data))
		return err
	}); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// LoadLastSweep reads dir's record of its last sweep; nil without error
// when there is none (a state dir from before it was kept).
func LoadLastSweep(dir string) (*LastSweep, error) {
	data, err := os.ReadFile(filepath.Join(dir, LastSweepName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("snapshot: %s %v: run 'ibdoctor sweep' (it rewrites the file)", filepath.Join(dir, LastSweepName), err)
	}
	var l LastSweep
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("snapshot: %s: %w (the next sweep rewrites it)", LastSweepName, err)
	}
	return &l, nil
}

// TakenAt is when the snapshot in dir was taken (snapshot.json's
// taken_at), for what needs its time alone.
func TakenAt(dir string) (time.Time, error) {
	s, _, err := readDoc(filepath.Join(dir, FileName))
	if err != nil {
		return time.Time{}, err
	}
	return s.TakenAt, nil
}
