package cli

import (
	"os"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/spf13/pflag"
)

// addSourceFlags declares the flags that choose and tune the fabric
// connection; every command that talks to a fabric honours them.
func addSourceFlags(fs *pflag.FlagSet, o *source.Options) {
	fs.StringVar(&o.Sim, "sim", "", "use the in-process simulator: --sim alone for the built-in sample fabric, --sim=FILE for a saved fabric (ibnetdiscover output incl. -p, ibdiagnet2 files or an ibdiagnet directory, ibsim net file or ibdoctor JSON; docs/schema-fabric.md)")
	fs.Lookup("sim").NoOptDefVal = "sample"
	fs.StringVar(&o.LFTs, "lfts", "", "forwarding tables for --sim=FILE (dump_fts or ibroute output); without it the file's own, else computed min-hop routes, labelled as such")
	fs.StringVar(&o.Faults, "faults", "", "faults file for --sim (docs/faults.md)")
	fs.DurationVar(&o.SimServiceTime, "sim-service-time", 0, "simulated time each node's management agent takes per MAD (e.g. 20us)")
	fs.DurationVar(&o.SimHopLatency, "sim-hop-latency", 0, "simulated latency per hop (e.g. 1us)")

	fs.StringVar(&o.IBSim, "ibsim", "", "talk to an ibsim fabric simulator with this socket name (--ibsim=NAME; --ibsim alone uses $IBSIM_SOCKNAME or \"sim\")")
	def := os.Getenv("IBSIM_SOCKNAME")
	if def == "" {
		def = "sim"
	}
	fs.Lookup("ibsim").NoOptDefVal = def
	fs.StringVar(&o.IBSimHost, "ibsim-host", "", "ibsim node to attach to, by id or description (SIM_HOST)")

	fs.StringVarP(&o.CA, "ca", "C", "", "local RDMA device to use, e.g. mlx5_0 (default: the first with an ACTIVE port)")
	fs.IntVarP(&o.Port, "port", "P", 0, "local port number on --ca")

	fs.StringVar(&o.Pcap, "pcap", "", "record every MAD exchanged into this pcap file (opens in Wireshark)")
	fs.DurationVarP(&o.Timeout, "timeout", "t", time.Second, "how long to wait for each MAD's response before retrying (1ms to 5m)")
	fs.IntVar(&o.Retries, "retries", 3, "retries after a MAD times out (0 to 20)")
	fs.IntVarP(&o.Window, "outstanding", "o", 64, "most MADs in flight at once (1 to 4096)")
	fs.IntVar(&o.PerDest, "per-node", 2, "most MADs in flight to one node (1 to 256; its management CPU answers one at a time)")
}

// detailFlag declares --detail, how many findings printReport shows with
// their evidence and next step; check and gate share it so that it means
// the same in both (def differs: a prolog's log wants fewer).
func detailFlag(fs *pflag.FlagSet, p *int, def int) {
	fs.IntVar(p, "detail", def, "show evidence and next steps for the first N findings")
}
