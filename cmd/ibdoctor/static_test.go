package main

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStaticBinary builds ibdoctor with CGO_ENABLED=0 and checks the ELF
// is static: no program interpreter, no dynamic section, no shared
// libraries, and no cgo or libpcap binding in its build info. With
// IBDOCTOR_BIN set (make static), that binary is checked as well.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		t.Fatalf("go tool not found at %s: %v", goTool, err)
	}
	bin := filepath.Join(t.TempDir(), "ibdoctor")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build with CGO_ENABLED=0: %v\n%s", err, out)
	}
	checkStatic(t, bin)
	if p := os.Getenv("IBDOCTOR_BIN"); p != "" {
		t.Run("IBDOCTOR_BIN", func(t *testing.T) { checkStatic(t, p) })
	}
}

func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			t.Errorf("%s has a PT_INTERP program header: it needs a dynamic loader", path)
		case elf.PT_DYNAMIC:
			t.Errorf("%s has a PT_DYNAMIC program header: it is dynamically linked", path)
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		t.Errorf("%s has a .dynamic section", path)
	}
	if s := f.Section(".interp"); s != nil {
		t.Errorf("%s has an .interp section", path)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatalf("%s: reading imported libraries: %v", path, err)
	}
	if len(libs) != 0 {
		t.Errorf("%s needs shared libraries %v", path, libs)
	}

	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: no Go build info: %v", path, err)
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			t.Errorf("%s was built with CGO_ENABLED=%s", path, s.Value)
		}
	}
	for _, d := range bi.Deps {
		if strings.HasSuffix(d.Path, "gopacket/pcap") {
			t.Errorf("%s depends on %s (the libpcap cgo binding)", path, d.Path)
		}
	}
}
