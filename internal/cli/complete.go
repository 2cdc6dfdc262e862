package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// completeValues makes the shell offer values after --flag, not file
// names (trial E8). values is the list the flag is validated against, so
// what is offered is what is accepted.
func completeValues(cmd *cobra.Command, flag string, values []string) {
	// The flag is the command's own: an error here is a misspelt name.
	if err := cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}); err != nil {
		panic(err)
	}
}

// orList is "a, b or c", for a message naming the values a flag takes.
func orList(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}
