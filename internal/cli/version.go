package cli

import (
	"encoding/json"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/spf13/cobra"
)

// versionOptions are version's flags.
type versionOptions struct {
	json bool
}

// newVersionCmd builds version; runF, when not nil, runs instead of
// runVersion.
func newVersionCmd(a *app, runF func(*versionOptions) error) *cobra.Command {
	var o versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the ibdoctor version and how it was built",
		Args:  a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o)
			}
			return a.runVersion(&o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.Flags().BoolVar(&o.json, "json", false, "print as JSON")
	return cmd
}

// runVersion prints the version and how the binary was built.
func (a *app) runVersion(o *versionOptions) error {
	info := buildinfo.Get()
	if o.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	rev := info.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if info.Modified {
		rev += "+dirty"
	}
	cgo := "static, no cgo"
	if info.CGO {
		cgo = "cgo enabled"
	}
	fmt.Fprintf(a.stdout, "ibdoctor %s", info.Version)
	if rev != "" {
		fmt.Fprintf(a.stdout, " (%s)", rev)
	}
	fmt.Fprintf(a.stdout, " %s, %s\n", info.GoVersion, cgo)
	return nil
}
