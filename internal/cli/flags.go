package cli

import (
	"os"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/spf13/pflag"
)

// addSourceFlags declares the flags that choose and tune the fabric
// connection; every command that talks to a fabric honours them.
func addSourceFlags(fs *pflag.FlagSet, o *source.Options) {
	fs.StringVar(&o.Sim, "sim", "", "use the in-process simulator: --sim alone for the built-in sample fabric, --sim FILE for a topology file (ibnetdiscover text, ibsim net file or ibdoctor JSON)")
	fs.Lookup("sim").NoOptDefVal = "sample"
	fs.StringVar(&o.Faults, "faults", "", "faults file for --sim (docs/faults.md)")
	fs.DurationVar(&o.SimServiceTime, "sim-service-time", 0, "simulated time each node's management agent takes per MAD (e.g. 20us)")
	fs.DurationVar(&o.SimHopLatency, "sim-hop-latency", 0, "simulated latency per hop (e.g. 1us)")

	fs.StringVar(&o.IBSim, "ibsim", "", "talk to an ibsim fabric simulator with this socket name (IBSIM_SOCKNAME; --ibsim alone uses $IBSIM_SOCKNAME or \"sim\")")
	def := os.Getenv("IBSIM_SOCKNAME")
	if def == "" {
		def = "sim"
	}
	fs.Lookup("ibsim").NoOptDefVal = def
	fs.StringVar(&o.IBSimHost, "ibsim-host", "", "ibsim node to attach to, by id or description (SIM_HOST)")

	fs.StringVarP(&o.CA, "ca", "C", "", "local RDMA device to use, e.g. mlx5_0 (default: the first with an ACTIVE port)")
	fs.IntVarP(&o.Port, "port", "P", 0, "local port number on --ca")

	fs.StringVar(&o.Pcap, "pcap", "", "record every MAD exchanged into this pcap file (opens in Wireshark)")
	fs.DurationVarP(&o.Timeout, "timeout", "t", time.Second, "how long to wait for each MAD's response before retrying")
	fs.IntVar(&o.Retries, "retries", 3, "retries after a MAD times out")
	fs.IntVarP(&o.Window, "outstanding", "o", 64, "most MADs in flight at once")
	fs.IntVar(&o.PerDest, "per-node", 2, "most MADs in flight to one node (its management CPU answers one at a time)")
}

// normalizeArgs lets "--sim FILE" work although --sim may stand alone: a
// word after a bare --sim that names an existing file (and is not a
// command) becomes its value. Likewise "--ibsim NAME" when NAME does not
// look like a command or flag is left alone (NAME must be given with '='
// to be unambiguous).
func normalizeArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if a == "--sim" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			if st, err := os.Stat(args[i+1]); err == nil && !st.IsDir() {
				out = append(out, "--sim="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
