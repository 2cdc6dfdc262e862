package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Prometheus writes the document's headline numbers in the Prometheus
// text exposition format, for node_exporter's textfile collector.
func Prometheus(w io.Writer, d *Document) error {
	var b bytes.Buffer
	metric := func(name, help, typ string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric("ibdoctor_findings", "Findings of the last sweep by severity.", "gauge")
	for _, s := range []string{"critical", "error", "warning", "info"} {
		fmt.Fprintf(&b, "ibdoctor_findings{severity=%q} %d\n", s, d.Counts[s])
	}
	metric("ibdoctor_check_findings", "Findings of the last sweep by check and severity.", "gauge")
	type key struct{ check, sev string }
	byCheck := map[key]int{}
	for _, f := range d.Findings {
		byCheck[key{f.Check, f.Severity.String()}]++
	}
	keys := make([]key, 0, len(byCheck))
	for k := range byCheck {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.check+a.sev, b.check+b.sev) })
	for _, k := range keys {
		fmt.Fprintf(&b, "ibdoctor_check_findings{check=%q,severity=%q} %d\n", k.check, k.sev, byCheck[k])
	}
	metric("ibdoctor_fabric_nodes", "Nodes discovered by type.", "gauge")
	fmt.Fprintf(&b, "ibdoctor_fabric_nodes{type=\"switch\"} %d\nibdoctor_fabric_nodes{type=\"ca\"} %d\n", d.Fabric.Switches, d.Fabric.CAs)
	metric("ibdoctor_fabric_links", "Links discovered.", "gauge")
	fmt.Fprintf(&b, "ibdoctor_fabric_links %d\n", d.Fabric.Links)
	metric("ibdoctor_unreached", "Things the sweep could not read.", "gauge")
	fmt.Fprintf(&b, "ibdoctor_unreached %d\n", len(d.Unreached))
	metric("ibdoctor_sweep_complete", "1 if the sweep read everything it needed.", "gauge")
	fmt.Fprintf(&b, "ibdoctor_sweep_complete %d\n", boolInt(d.Complete))
	metric("ibdoctor_sweep_timestamp_seconds", "When the sweep ran (Unix time).", "gauge")
	fmt.Fprintf(&b, "ibdoctor_sweep_timestamp_seconds %d\n", d.GeneratedAt.Unix())
	_, err := w.Write(b.Bytes())
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so readers (node_exporter, the next gate) never see
// a half-written file.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
