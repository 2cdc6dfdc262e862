package topology

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// Hosts describes how HCAs are grouped into servers.
type Hosts struct {
	// HCAsPerServer is the number of one-port HCAs per server (8 on a
	// DGX); zero means 1. HCAs of one server share a SystemImageGUID and
	// are described "gpu042 mlx5_0" .. "gpu042 mlx5_7".
	HCAsPerServer int
	// Prefix names servers; zero means "gpu".
	Prefix string
}

func (h Hosts) withDefaults() Hosts {
	if h.HCAsPerServer == 0 {
		h.HCAsPerServer = 1
	}
	if h.Prefix == "" {
		h.Prefix = "gpu"
	}
	return h
}

// addHCAs adds n HCAs numbered from 0 in server-major order and returns
// them.
func (b *builder) addHCAs(h Hosts, n int) []*fabric.Node {
	servers := (n + h.HCAsPerServer - 1) / h.HCAsPerServer
	hcas := make([]*fabric.Node, n)
	for i := range hcas {
		s := i / h.HCAsPerServer
		hcas[i] = b.addHCA(name(h.Prefix, s+1, servers, 3), s, i%h.HCAsPerServer)
	}
	return hcas
}

// FatTree2 is a two-level fat tree: every leaf cabled to every spine.
// Leaf ports 1..HostsPerLeaf go to HCAs, the next Spines×LinksPerPair
// ports to the spines (spine by spine); spine port (leaf·LinksPerPair +
// k + 1) goes to a leaf. Oversubscription is HostsPerLeaf against
// Spines×LinksPerPair.
type FatTree2 struct {
	Common
	Hosts
	Leaves, Spines int
	// HostsPerLeaf is the number of HCA ports cabled to each leaf.
	HostsPerLeaf int
	// LinksPerPair is the number of cables between each leaf and each
	// spine; zero means 1.
	LinksPerPair int
}

// Build generates the fabric: spines, then leaves, then HCAs.
func (t FatTree2) Build() (*fabric.Fabric, error) {
	t.Common = t.Common.withDefaults()
	t.Hosts = t.Hosts.withDefaults()
	if t.LinksPerPair == 0 {
		t.LinksPerPair = 1
	}
	if err := t.Common.validate(); err != nil {
		return nil, err
	}
	if t.Leaves < 1 || t.Spines < 0 || t.HostsPerLeaf < 0 || t.LinksPerPair < 1 {
		return nil, fmt.Errorf("topology: fat tree needs at least one leaf and non-negative counts (leaves %d, spines %d, hosts/leaf %d, links/pair %d)",
			t.Leaves, t.Spines, t.HostsPerLeaf, t.LinksPerPair)
	}
	if need := t.HostsPerLeaf + t.Spines*t.LinksPerPair; need > t.SwitchPorts {
		return nil, fmt.Errorf("topology: a leaf needs %d ports (%d hosts + %d spines × %d links) but switches have %d; lower the counts or raise SwitchPorts",
			need, t.HostsPerLeaf, t.Spines, t.LinksPerPair, t.SwitchPorts)
	}
	if need := t.Leaves * t.LinksPerPair; t.Spines > 0 && need > t.SwitchPorts {
		return nil, fmt.Errorf("topology: a spine needs %d ports (%d leaves × %d links) but switches have %d", need, t.Leaves, t.LinksPerPair, t.SwitchPorts)
	}
	nh := t.Leaves * t.HostsPerLeaf
	b := newBuilder(t.Common, t.Leaves+t.Spines+nh)
	spines := make([]*fabric.Node, t.Spines)
	for i := range spines {
		spines[i] = b.addSwitch(name("spine", i+1, t.Spines, 2))
	}
	leaves := make([]*fabric.Node, t.Leaves)
	for i := range leaves {
		leaves[i] = b.addSwitch(name("leaf", i+1, t.Leaves, 2))
	}
	hcas := b.addHCAs(t.Hosts, nh)
	for l, leaf := range leaves {
		for h := 0; h < t.HostsPerLeaf; h++ {
			if err := b.connect(leaf, h+1, hcas[l*t.HostsPerLeaf+h], 1); err != nil {
				return nil, err
			}
		}
		for s, spine := range spines {
			for k := 0; k < t.LinksPerPair; k++ {
				lp := t.HostsPerLeaf + s*t.LinksPerPair + k + 1
				sp := l*t.LinksPerPair + k + 1
				if err := b.connect(leaf, lp, spine, sp); err != nil {
					return nil, err
				}
			}
		}
	}
	return b.f, nil
}

// FatTree3 is a three-level fat tree of pods. Each pod has LeavesPerPod
// leaves and SpinesPerPod spines, every leaf cabled to every spine of its
// pod. Cores form SpinesPerPod groups of Cores/SpinesPerPod; spine g of
// every pod is cabled to every core of group g.
//
// Leaf ports: hosts first, then spine uplinks. Spine ports: leaves of the
// pod first, then cores. Core port (pod·LinksSpineCore + k + 1) goes to a
// pod.
type FatTree3 struct {
	Common
	Hosts
	Pods, LeavesPerPod, SpinesPerPod, HostsPerLeaf int
	// Cores must be a multiple of SpinesPerPod.
	Cores int
	// Cables per leaf–spine and per spine–core pair; zero means 1.
	LinksLeafSpine, LinksSpineCore int
}

// FatTree3Nodes returns the node count t would build.
func (t FatTree3) Nodes() int {
	return t.Pods*(t.LeavesPerPod*(1+t.HostsPerLeaf)+t.SpinesPerPod) + t.Cores
}

// Build generates the fabric: cores, spines and leaves pod by pod, then
// HCAs.
func (t FatTree3) Build() (*fabric.Fabric, error) {
	t.Common = t.Common.withDefaults()
	t.Hosts = t.Hosts.withDefaults()
	if t.LinksLeafSpine == 0 {
		t.LinksLeafSpine = 1
	}
	if t.LinksSpineCore == 0 {
		t.LinksSpineCore = 1
	}
	if err := t.Common.validate(); err != nil {
		return nil, err
	}
	if t.Pods < 1 || t.LeavesPerPod < 1 || t.SpinesPerPod < 1 || t.HostsPerLeaf < 0 || t.Cores < 0 {
		return nil, fmt.Errorf("topology: 3-level fat tree needs pods, leaves and spines ≥ 1 (pods %d, leaves/pod %d, spines/pod %d)", t.Pods, t.LeavesPerPod, t.SpinesPerPod)
	}
	if t.Cores%t.SpinesPerPod != 0 {
		return nil, fmt.Errorf("topology: %d cores do not split into %d equal groups (one per spine of a pod); use a multiple of %d", t.Cores, t.SpinesPerPod, t.SpinesPerPod)
	}
	group := t.Cores / t.SpinesPerPod
	for _, c := range []struct {
		what string
		need int
	}{
		{"leaf", t.HostsPerLeaf + t.SpinesPerPod*t.LinksLeafSpine},
		{"spine", t.LeavesPerPod*t.LinksLeafSpine + group*t.LinksSpineCore},
		{"core", t.Pods * t.LinksSpineCore},
	} {
		if c.need > t.SwitchPorts {
			return nil, fmt.Errorf("topology: a %s needs %d ports but switches have %d; lower the counts or raise SwitchPorts", c.what, c.need, t.SwitchPorts)
		}
	}
	nLeaves, nSpines := t.Pods*t.LeavesPerPod, t.Pods*t.SpinesPerPod
	nh := nLeaves * t.HostsPerLeaf
	b := newBuilder(t.Common, t.Nodes())
	cores := make([]*fabric.Node, t.Cores)
	for i := range cores {
		cores[i] = b.addSwitch(name("core", i+1, t.Cores, 2))
	}
	spines := make([]*fabric.Node, nSpines)
	leaves := make([]*fabric.Node, nLeaves)
	for p := 0; p < t.Pods; p++ {
		for i := 0; i < t.SpinesPerPod; i++ {
			j := p*t.SpinesPerPod + i
			spines[j] = b.addSwitch(name("spine", j+1, nSpines, 2))
		}
		for i := 0; i < t.LeavesPerPod; i++ {
			j := p*t.LeavesPerPod + i
			leaves[j] = b.addSwitch(name("leaf", j+1, nLeaves, 2))
		}
	}
	hcas := b.addHCAs(t.Hosts, nh)
	for l, leaf := range leaves {
		for h := 0; h < t.HostsPerLeaf; h++ {
			if err := b.connect(leaf, h+1, hcas[l*t.HostsPerLeaf+h], 1); err != nil {
				return nil, err
			}
		}
	}
	for p := 0; p < t.Pods; p++ {
		for li := 0; li < t.LeavesPerPod; li++ {
			leaf := leaves[p*t.LeavesPerPod+li]
			for si := 0; si < t.SpinesPerPod; si++ {
				spine := spines[p*t.SpinesPerPod+si]
				for k := 0; k < t.LinksLeafSpine; k++ {
					lp := t.HostsPerLeaf + si*t.LinksLeafSpine + k + 1
					sp := li*t.LinksLeafSpine + k + 1
					if err := b.connect(leaf, lp, spine, sp); err != nil {
						return nil, err
					}
				}
			}
		}
		for si := 0; si < t.SpinesPerPod; si++ {
			spine := spines[p*t.SpinesPerPod+si]
			for ci := 0; ci < group; ci++ {
				core := cores[si*group+ci]
				for k := 0; k < t.LinksSpineCore; k++ {
					sp := t.LeavesPerPod*t.LinksLeafSpine + ci*t.LinksSpineCore + k + 1
					cp := p*t.LinksSpineCore + k + 1
					if err := b.connect(spine, sp, core, cp); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return b.f, nil
}

// FatTree50k is the benchmark fabric of about 50,000 nodes: 64-port 4X NDR
// switches, 44 pods of 32 leaves and 32 spines, 32 HCAs per leaf, 1,024
// cores (45,056 HCAs + 3,840 switches = 48,896 nodes).
func FatTree50k() FatTree3 {
	return FatTree3{Pods: 44, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 1024}
}

// FatTree8k is the benchmark fabric of 8,192 HCAs: 32-port switches, 32
// pods of 16 leaves and 16 spines, 16 HCAs per leaf, 256 cores (9,472
// nodes). A non-blocking 3-level tree of 16-port switches holds at most
// 1,024 HCAs, so 32-port switches are used for this size.
func FatTree8k() FatTree3 {
	return FatTree3{Common: Common{SwitchPorts: 32}, Pods: 32, LeavesPerPod: 16, SpinesPerPod: 16, HostsPerLeaf: 16, Cores: 256}
}
