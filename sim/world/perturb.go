package world

import (
	"fmt"
	"slices"
	"time"
)

// Perturbations in the style of Sieve (OSDI'22; docs/simulation.md §B1): each of Sieve's three
// patterns, as the ops that perturb a run at one of its ops. This is their one definition:
// scenarios.Perturb and PerturbFile (a controller the world hosts, a scenario file),
// clientgo.Perturb (a client-go controller) and the harness's hidden changes all take their
// ops from here, so a kind means the same thing wherever it is tried, and a perturbed run is
// ops like any other: recorded, written out, replayed and shrunk.
//
// Each recipe is what a real cluster does to a controller, not a shortcut the simulator
// allows: a connection that drops (the watches close cleanly, as client-go sees an apiserver
// restart or a load balancer's reset), an apiserver whose watch cache lags etcd, a history
// compacted past a client's resourceVersion, a process that dies.

// The perturbation kinds, Sieve's patterns.
const (
	// PerturbRestart (intermediate state): the client crash-restarts there (OpCrashRestart),
	// losing what it held in memory, while the world goes on: a restart mid-reconcile finds
	// the half of the reconcile that was written.
	PerturbRestart = "restart"
	// PerturbStale (stale state, "time travel"): a replica (Replica) starts lagging StaleLag
	// behind, to the end of the run, and the client's connection moves (To): every watch
	// closes cleanly and the next list or watch is routed to replica To. This is what a cluster
	// does when one apiserver's watch cache falls behind etcd (kubernetes/kubernetes#59848) and
	// the connection of a client drops (an apiserver restarts in a rolling upgrade, a load
	// balancer resets it): the load balancer hands the reconnection to any apiserver, and the
	// client's short requests go to any of them too. Moved to the lagging replica (To ==
	// Replica, Sieve's recipe: the controller pointed at a stale apiserver), the client's view
	// comes from the past; moved to a fresh one, its informer is current while its reads (a
	// LIST at resourceVersion 0, served from a watch cache) may come from the lagging one. A
	// campaign tries every pair.
	PerturbStale = "stale"
	// PerturbUnobserved (unobserved state): the write there lands while the client's informers
	// are away, so they learn of it only from a relist: the watches close cleanly, the write
	// lands, and the history is compacted past it, so the informers' re-watch from their last
	// resourceVersion gets 410 Expired and their relist finds the write's result (a delete as a
	// tombstone), whose event they never saw. A cluster does this when a client reconnects
	// after etcd's compaction (every five minutes) or the watch cache's window moved past its
	// resourceVersion. A campaign tries it at deletes (AppliesAt), where a missed event leaves
	// the tombstone only a relist tells; the harness's hidden changes use it for updates too.
	PerturbUnobserved = "unobserved"
)

// StaleLag is how far behind a stale perturbation's replica lags: a watch cache under load
// falls seconds behind etcd, and a lag under kube-apiserver's three-second wait for a fresh
// enough cache (fakeapi.DefaultResourceVersionWait) is served late rather than refused, so the
// client reads the past instead of getting 504s until the replica catches up.
const StaleLag = time.Second

// PerturbKinds lists the perturbation kinds in the order a campaign tries them at each point.
func PerturbKinds() []string { return []string{PerturbRestart, PerturbStale, PerturbUnobserved} }

// Perturbation is one perturbation: a kind and what it is aimed at.
type Perturbation struct {
	Kind string
	// Replica is the replica a stale perturbation lags, To the replica the client's connection
	// moves to (its next list or watch).
	Replica, To int
	// Client is the client a restart crash-restarts (World.AddClient).
	Client string
}

// Validate says whether p is complete: a known kind, a restart's client, a stale one's replica
// not negative.
func (p Perturbation) Validate() error {
	switch {
	case !slices.Contains(PerturbKinds(), p.Kind):
		return fmt.Errorf("world: unknown perturbation kind %q (want %v)", p.Kind, PerturbKinds())
	case p.Kind == PerturbRestart && !validName(p.Client):
		return fmt.Errorf("world: perturbation restart: invalid Client %q (the client restarted)", p.Client)
	case p.Replica < 0 || p.To < 0:
		return fmt.Errorf("world: perturbation %s: negative Replica %d or To %d", p.Kind, p.Replica, p.To)
	}
	return nil
}

// AppliesAt reports whether a campaign tries p at op: a restart and a stale view at any op, an
// unobserved state at a delete.
func (p Perturbation) AppliesAt(op Op) bool {
	return p.Kind != PerturbUnobserved || op.Kind == OpDelete
}

// Around returns the ops that perturb the run at op: those that come just before it and just
// after it. A restart and a stale view come before op; an unobserved state wraps op, which
// must be a write (create, update, patch or delete).
func (p Perturbation) Around(op Op) (before, after []Op, err error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	switch p.Kind {
	case PerturbRestart:
		return []Op{{Kind: OpCrashRestart, Client: p.Client}}, nil, nil
	case PerturbStale:
		return []Op{{Kind: OpLagReplica, Replica: p.Replica, Duration: StaleLag}, {Kind: OpRouteNext, Replica: p.To},
			{Kind: OpCloseWatches}}, nil, nil
	}
	if !op.Kind.write() {
		return nil, nil, fmt.Errorf("world: perturbation unobserved: %s is not a write", op)
	}
	return []Op{{Kind: OpCloseWatches}}, []Op{{Kind: OpCompact}}, nil
}

// Ops is Around's ops with op between them: what stands for op in the perturbed run.
func (p Perturbation) Ops(op Op) ([]Op, error) {
	before, after, err := p.Around(op)
	if err != nil {
		return nil, err
	}
	return slices.Concat(before, []Op{op}, after), nil
}

func (p Perturbation) String() string {
	switch p.Kind {
	case PerturbStale:
		if p.To == p.Replica {
			return fmt.Sprintf("stale (replica %d lags %v, the client moved to it)", p.Replica, StaleLag)
		}
		return fmt.Sprintf("stale (replica %d lags %v, the client moved to replica %d)", p.Replica, StaleLag, p.To)
	case PerturbRestart:
		return "restart of " + p.Client
	}
	return p.Kind
}
