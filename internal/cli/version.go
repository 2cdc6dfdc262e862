package cli

import (
	"encoding/json"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the ibdoctor version and how it was built",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := buildinfo.Get()
			if asJSON {
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
