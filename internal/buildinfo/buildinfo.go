// Package buildinfo reports the ibdoctor version and how it was built.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Version is set at link time (-ldflags "-X .../buildinfo.Version=v1.2.3");
// otherwise the module version or VCS revision is used.
var Version = ""

// Revision is the commit the binary was built from when the build stamps
// none itself (GOFLAGS=-buildvcs=false): the Makefile sets it with
// -ldflags "-X .../buildinfo.Revision=$(git rev-parse HEAD)".
var Revision = ""

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	CGO       bool   `json:"cgo"`
}

// Get returns the build information of the running binary.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			case "CGO_ENABLED":
				info.CGO = s.Value == "1"
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Revision == "" {
		info.Revision = Revision
	}
	if info.Revision == "" {
		info.Revision = "unknown" // said, not left out: the binary cannot tell
	}
	return info
}
