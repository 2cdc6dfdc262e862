package checks

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "topology.rail-miswired",
		Summary: "on a rail-optimized fabric (inferred from host descriptions and where each rail's HCAs land), a host's HCA cabled to another rail's leaf, or two HCAs of one host on one rail",
		Needs:   []string{"topology"},
		run:     (*Snapshot).railMiswired,
	})
}

// railHCA is one host adapter with its rail (the device name in its
// description: "gpu042 mlx5_3" is host gpu042, rail mlx5_3) and the leaf
// its cable lands on.
type railHCA struct {
	node *fabric.Node
	port *fabric.Port
	host string
	dev  string
	leaf *fabric.Node
}

func (h railHCA) name() string { return h.host + " " + h.dev }

// railsOf infers the rails: every host with two or more described,
// cabled HCAs; each leaf's rail is the device name most of its HCAs
// carry. The fabric counts as rail-optimized when at least two rails
// exist and on at least two thirds of the leaves (with two or more such
// HCAs) three quarters or more of the HCAs share the device name;
// otherwise nothing is inferred (a fat tree whose hosts have one HCA, or
// whose HCAs share a leaf, has no rails).
func railsOf(f *fabric.Fabric) (map[string][]railHCA, map[*fabric.Node]string) {
	hosts := map[string][]railHCA{}
	for _, n := range f.Nodes {
		if !isHostNode(n) {
			continue
		}
		host, devName, ok := twoWords(n.Description)
		if !ok || isFirmwareDefault(n.Description) {
			continue
		}
		host = fabric.HostName(host)
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch || !linkUp(p) {
				continue
			}
			dev := devName
			if n.NumPorts() > 1 {
				dev = fmt.Sprintf("%s/%d", devName, p.Num) // a dual-port HCA's ports are two rails
			}
			hosts[host] = append(hosts[host], railHCA{node: n, port: p, host: host, dev: dev, leaf: p.Remote.Node})
		}
	}
	count := map[*fabric.Node]map[string]int{}
	for h, hcas := range hosts {
		if len(hcas) < 2 {
			delete(hosts, h)
			continue
		}
		for _, x := range hcas {
			if count[x.leaf] == nil {
				count[x.leaf] = map[string]int{}
			}
			count[x.leaf][x.dev]++
		}
	}
	railOf := map[*fabric.Node]string{}
	leaves, pure := 0, 0
	rails := map[string]bool{}
	for leaf, byDev := range count {
		total, best, bestDev := 0, 0, ""
		for d, c := range byDev {
			total += c
			if c > best || (c == best && d < bestDev) {
				best, bestDev = c, d
			}
		}
		if total < 2 {
			continue
		}
		leaves++
		if 4*best >= 3*total {
			pure++
			railOf[leaf] = bestDev
			rails[bestDev] = true
		}
	}
	if len(rails) < 2 || leaves == 0 || 3*pure < 2*leaves {
		return nil, nil
	}
	return hosts, railOf
}

func (s *Snapshot) railMiswired() []Finding {
	hosts, railOf := railsOf(s.Fabric)
	if railOf == nil {
		return nil
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	slices.Sort(names)
	var out []Finding
	for _, h := range names {
		hcas := hosts[h]
		slices.SortFunc(hcas, func(a, b railHCA) int { return cmp.Compare(a.dev, b.dev) })
		var wrong []railHCA
		onRail := map[string][]railHCA{}
		rails := map[string]bool{}
		for _, r := range railOf {
			rails[r] = true
		}
		for _, x := range hcas {
			r, ok := railOf[x.leaf]
			// An HCA whose device name is no rail, or names devices
			// another way than the leaf's rail (a management host's
			// mlx5_0 on a leaf of compute HCA-5s), has no rail to be
			// off.
			if !ok || !rails[x.dev] || devScheme(x.dev) != devScheme(r) {
				continue
			}
			onRail[r] = append(onRail[r], x)
			if r != x.dev {
				wrong = append(wrong, x)
			}
		}
		if len(wrong) == 0 || !slices.ContainsFunc(wrong, func(x railHCA) bool { return s.inScope(x.port) }) {
			continue
		}
		done := map[string]bool{}
		for _, a := range wrong {
			if done[a.dev] {
				continue
			}
			done[a.dev] = true
			ra := railOf[a.leaf]
			var title, ev string
			ents := []Entity{s.entityOf(a.port, "end"), s.nodeEntity(a.leaf, "switch")}
			// The HCA whose rail a's leaf belongs to, if any: a swapped
			// pair, or two HCAs of this host on one rail.
			var b *railHCA
			for i := range hcas {
				if hcas[i].dev == ra {
					b = &hcas[i]
				}
			}
			switch {
			case b != nil && railOf[b.leaf] == a.dev:
				done[b.dev] = true
				title = fmt.Sprintf("%s: %s and %s are cabled to each other's rail: %s is on %s (rail %s), %s on %s (rail %s)",
					h, a.dev, b.dev, a.dev, s.nodeName(a.leaf), ra, b.dev, s.nodeName(b.leaf), railOf[b.leaf])
				ev = fmt.Sprintf("%s %s -> %s/%d, a leaf of rail %s; %s %s -> %s/%d, a leaf of rail %s",
					h, a.dev, s.nodeName(a.leaf), a.port.Remote.Num, ra, h, b.dev, s.nodeName(b.leaf), b.port.Remote.Num, railOf[b.leaf])
				ents = append(ents, s.entityOf(b.port, "end"), s.nodeEntity(b.leaf, "switch"))
			case b != nil:
				title = fmt.Sprintf("%s: %s is cabled to %s, a leaf of rail %s, where %s %s is: two HCAs of one host on one rail",
					h, a.dev, s.nodeName(a.leaf), ra, h, b.dev)
				ev = fmt.Sprintf("%s %s -> %s/%d and %s %s -> %s/%d, both leaves of rail %s; no leaf of rail %s has %s's %s",
					h, a.dev, s.nodeName(a.leaf), a.port.Remote.Num, h, b.dev, s.nodeName(b.leaf), b.port.Remote.Num, ra, a.dev, h, a.dev)
				ents = append(ents, s.entityOf(b.port, "end"), s.nodeEntity(b.leaf, "switch"))
			default:
				title = fmt.Sprintf("%s: %s is cabled to %s, a leaf of rail %s", h, a.dev, s.nodeName(a.leaf), ra)
				ev = fmt.Sprintf("%s %s -> %s/%d; the leaf's other HCAs are rail %s", h, a.dev, s.nodeName(a.leaf), a.port.Remote.Num, ra)
			}
			out = append(out, Finding{
				Check:    "topology.rail-miswired",
				Severity: Error,
				Title:    title,
				Entities: ents,
				Evidence: []Evidence{{Name: "rail", Text: ev + fmt.Sprintf(" (rails inferred from the host descriptions and each leaf's majority: %s)", railsEvidence(railOf))}},
				Impact:   Impact{PathShare: 2 / float64(max(1, s.hostCount())), Score: 2 / float64(max(1, s.hostCount())), Summary: "rail-local collectives (NCCL) from this host cross the spines instead of staying on the rail's leaf: about half the all-reduce bandwidth for jobs using it, while every link looks healthy"},
				Action:   fmt.Sprintf("Swap the cables at %s so that each HCA goes to its own rail's leaf (check the port labels against the cabling plan), then confirm with 'ibdoctor check' that the finding is gone.", h),
				Basis:    "topology",
			})
		}
	}
	return out
}

// railsEvidence counts railOf's leaves and their rails and says how hosts
// name the rails: "8 leaves, 4 rails", or, where hosts of several units name their adapters
// in several ways (the DGX file's HCA-1 and mlx5_0), each naming's rails
// and leaves. Namings with as many rails each are the same rails taken
// in device order (a unit's n-th adapter is on its n-th rail's leaf, as
// every unit has a leaf per rail); namings that do not pair up are not
// added into one count (trial C10: "8 rails" of a fabric with 4).
func railsEvidence(railOf map[*fabric.Node]string) string {
	lv := words.Count(len(railOf), "leaf")
	devs, leaves := map[string][]string{}, map[string]int{}
	for _, r := range railOf {
		sc := devScheme(r)
		leaves[sc]++
		if !slices.Contains(devs[sc], r) {
			devs[sc] = append(devs[sc], r)
		}
	}
	if len(devs) == 1 {
		for _, ds := range devs {
			return lv + ", " + words.Count(len(ds), "rail")
		}
	}
	schemes := slices.SortedFunc(maps.Keys(devs), func(a, b string) int {
		return cmp.Or(cmp.Compare(leaves[b], leaves[a]), cmp.Compare(a, b))
	})
	pair := true
	parts := make([]string, len(schemes))
	for i, sc := range schemes {
		slices.SortFunc(devs[sc], words.Natural)
		_, same := joinRails(devs[sc], devs[schemes[0]])
		pair = pair && same && len(devs[sc]) == len(devs[schemes[0]])
		parts[i] = strings.Join(devs[sc], ", ") + " on " + strconv.Itoa(leaves[sc])
	}
	parts[0] += " leaves"
	// The parts hold commas: they are joined by semicolons.
	all := strings.Join(parts[:len(parts)-1], "; ") + " and " + parts[len(parts)-1]
	if pair {
		return fmt.Sprintf("%s, %s: %s, taken in device order as the same rails", lv, words.Count(len(devs[schemes[0]]), "rail"), all)
	}
	return fmt.Sprintf("%s; rails named in %d ways that do not pair up: %s", lv, len(schemes), all)
}

// joinRails joins two namings of the same rails in device order, the one
// rule by which topology.rail-miswired counts rails and
// topology.missing-hca compares groups across namings: each of short's
// devices to one of full's (both in natural order). With as many of each,
// the n-th is the n-th (every unit has a leaf per rail). With fewer in
// short (a unit that lost a rail), the device numbers decide which of
// full's it lacks: the one order-keeping choice where each of short's
// numbers is its partner's plus one same offset (mlx5_0, mlx5_4, mlx5_5
// are HCA-1, HCA-5, HCA-6 of HCA-1, HCA-2, HCA-5, HCA-6). None, or more
// than one: false.
func joinRails(short, full []string) (map[string]string, bool) {
	if len(short) == 0 || len(short) > len(full) {
		return nil, false
	}
	if len(short) == len(full) {
		m := make(map[string]string, len(short))
		for i, d := range short {
			m[d] = full[i]
		}
		return m, true
	}
	num := func(d string) (int, bool) {
		n := railNumber(d)
		return n, n >= 0 && !strings.Contains(d, "/")
	}
	var found map[string]string
	choices := 0
	pick := make([]int, len(short))
	var walk func(i, from, offset int)
	walk = func(i, from, offset int) {
		if i == len(short) {
			choices++
			found = make(map[string]string, len(short))
			for k, j := range pick {
				found[short[k]] = full[j]
			}
			return
		}
		a, ok := num(short[i])
		if !ok {
			return
		}
		for j := from; j <= len(full)-(len(short)-i); j++ {
			b, ok := num(full[j])
			if !ok || (i > 0 && a-b != offset) {
				continue
			}
			pick[i] = j
			walk(i+1, j+1, a-b)
		}
	}
	walk(0, 0, 0)
	if choices != 1 {
		return nil, false
	}
	return found, true
}

// devScheme is a device name without its trailing number: "mlx5_" for
// mlx5_3, "HCA-" for HCA-5.
func devScheme(dev string) string {
	dev, _, _ = strings.Cut(dev, "/")
	return strings.TrimRight(dev, "0123456789")
}

// railNumber is a device name's trailing number (5 for HCA-5), -1 for
// none.
func railNumber(dev string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(dev, devScheme(dev)))
	if err != nil {
		return -1
	}
	return n
}
