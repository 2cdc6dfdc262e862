package buildinfo

import "testing"

// TestRevisionStampedOrUnknown: a test binary has no VCS stamp (as a
// build with GOFLAGS=-buildvcs=false), so the revision is the one the
// Makefile links in (-X .../buildinfo.Revision), else "unknown", never
// missing (trial E12: version showed no revision at all).
func TestRevisionStampedOrUnknown(t *testing.T) {
	if got := Get().Revision; got != "unknown" {
		t.Errorf("no stamp: revision %q, want unknown", got)
	}
	defer func(r string) { Revision = r }(Revision)
	Revision = "0123456789abcdef0123456789abcdef01234567"
	if got := Get().Revision; got != Revision {
		t.Errorf("stamped: revision %q, want %q", got, Revision)
	}
}
