package snapshot

import "fmt"

// anotherFabric is the one answer to "is this saved state (a snapshot,
// an accepted baseline) of the fabric a reader talks to?", which gate
// (its snapshot and baseline) and sweep (the previous sweep its counters
// are paired with) ask alike. A state of the reader's own source
// (sim:FILE, umad:mlx5_0/1) is this fabric's. One of another source is
// this fabric's only when it holds the reader's very port (local, its
// node GUID): another file or subnet lacks it. A reader whose port's GUID
// is not known (0) cannot show that, and the state is not used: using
// another fabric's snapshot or baseline judges this fabric against it,
// while not using one only costs a sweep (gate) or pairs no counters
// (sweep). why, when another, is what the caller's message gives.
func anotherFabric(saved, cur, port string, local uint64, has func(uint64) (bool, error)) (another bool, why string, err error) {
	if saved == cur {
		return false, "", nil
	}
	if local == 0 {
		return true, fmt.Sprintf("the GUID of this port, %s, is not known, so it cannot be told to be in it", port), nil
	}
	ok, err := has(local)
	if err != nil || ok {
		return false, "", err
	}
	return true, fmt.Sprintf("this port, %s, is not in it: another fabric", port), nil
}

// PlanOfAnotherFabric is anotherFabric for an expected topology given
// as a file (--expect-topology): it has no source, so it is this
// fabric's only when it holds the reader's port (has answers whether it
// holds a node GUID). Judged against another fabric's plan every switch
// of the plan is "missing" (trial C9: 3 critical topology.changed on the
// DGX dump against the Quantum-2 capture), as against a state dir's
// baseline of another fabric, which sweep refuses.
func PlanOfAnotherFabric(cur, port string, local uint64, has func(uint64) bool) (bool, string) {
	another, why, _ := anotherFabric("", cur, port, local, func(g uint64) (bool, error) { return has(g), nil })
	return another, why
}

// OfAnotherFabric says whether the snapshot is of a fabric other than
// the one a reader of source cur on the port named port, of node GUID
// local, talks to (anotherFabric), and why. A snapshot without gate.idx can tell only
// from its fabric, which is decoded then (once; FabricModel keeps it).
func (s *Snapshot) OfAnotherFabric(cur, port string, local uint64) (bool, string, error) {
	return anotherFabric(s.Source, cur, port, local, func(g uint64) (bool, error) {
		if has, known := s.HasNode(g); known {
			return has, nil
		}
		f, err := s.FabricModel()
		if err != nil {
			return false, err
		}
		return f.NodeByGUID(g) != nil, nil
	})
}

// OfAnotherFabric is Snapshot.OfAnotherFabric for an accepted baseline
// (baseline.idx): its Source is the sweep it was accepted from, or
// "baseline" in a file from before that was kept (the port decides).
// baseline.idx holds every node that is not a switch, so a host's port
// is in it when the host was.
func (x *Index) OfAnotherFabric(cur, port string, local uint64) (bool, string, error) {
	return anotherFabric(x.Source, cur, port, local, func(g uint64) (bool, error) {
		_, ok := x.nodeByGUID(g)
		return ok, nil
	})
}
