package fakeapi

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testclock "k8s.io/utils/clock/testing"
)

// changesView is what a consumer of ListChangesLent keeps: the objects by key, in key order.
type changesView struct {
	rev   uint64
	items []unstructured.Unstructured
}

func (v *changesView) apply(t *testing.T, c *ListChanges) {
	t.Helper()
	if c.Full {
		v.items = slices.Clone(c.Items)
		v.rev = c.Revision
		return
	}
	for _, ch := range c.Changes {
		i, found := slices.BinarySearchFunc(v.items, objKey{ch.Namespace, ch.Name}, func(u unstructured.Unstructured, k objKey) int {
			return compareKeys(objKey{u.GetNamespace(), u.GetName()}, k)
		})
		switch {
		case ch.Type == watch.Deleted && found:
			v.items = slices.Delete(v.items, i, i+1)
		case ch.Type == watch.Deleted:
		case found:
			if ch.Type != watch.Modified {
				t.Fatalf("%s/%s held before is %s", ch.Namespace, ch.Name, ch.Type)
			}
			v.items[i] = ch.Object
		default:
			if ch.Type != watch.Added {
				t.Fatalf("%s/%s not held before is %s", ch.Namespace, ch.Name, ch.Type)
			}
			v.items = slices.Insert(v.items, i, ch.Object)
		}
	}
	v.rev = c.Revision
}

// TestListChangesLentAsListLent drives two servers alike, through random writes, deletions,
// compactions, injected LIST failures and a small log that trims itself, and reads each resource
// after every operation: server a by ListLent, server b by ListChangesLent into a view it keeps.
// The view must hold exactly b's committed objects (the same maps, in key order, as a list
// would lend), and both servers must have served and recorded the same requests (the same
// failures taken, the same replicas routed to, the same records).
func TestListChangesLentAsListLent(t *testing.T) {
	var tally changesTally
	for seed := uint64(1); seed <= 60; seed++ {
		p := newChangesPair(t, seed)
		rnd := rand.New(rand.NewPCG(seed, 2))
		for op := 0; op < 150; op++ {
			p.randomOp(rnd, op, &tally)
			p.readAll(rnd, op, &tally)
		}
		if ra, rb := p.a.Requests(), p.b.Requests(); !reflect.DeepEqual(ra, rb) {
			t.Fatalf("seed %d: the request records differ:\n%v\n%v", seed, ra, rb)
		}
		if err := p.b.Lending().Check(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("full answers %d (%d to a reader that held a view), changes %d (deletions among them %d), failures injected %d", tally.full, tally.fullAgain, tally.partial, tally.deletes, tally.failures)
	if tally.fullAgain == 0 || tally.partial == 0 || tally.deletes == 0 || tally.failures == 0 {
		t.Fatalf("a path was not taken: full again %d, changes %d, deletions %d, failures %d", tally.fullAgain, tally.partial, tally.deletes, tally.failures)
	}
}

// changesTally counts the paths TestListChangesLentAsListLent took over all its seeds, so that
// it can fail if one was never taken.
type changesTally struct {
	full, fullAgain, partial, deletes, failures int
}

// changesPair is one seed of TestListChangesLentAsListLent: two servers driven alike (a read by
// ListLent, b by ListChangesLent) and the readers of four scopes.
type changesPair struct {
	t          *testing.T
	seed       uint64
	a, b       *Server
	aclk, bclk *testclock.FakeClock
	readers    []*changesReader
}

// changesReader reads one scope from both servers; view is what ListChangesLent has told it.
type changesReader struct {
	la, lb *ListerWatcher
	view   changesView
}

func newChangesPair(t *testing.T, seed uint64) *changesPair {
	t.Helper()
	mk := func() (*Server, *testclock.FakeClock) {
		clk := testclock.NewFakeClock(epoch)
		s, err := New(Config{Clock: clk, Rand: rand.New(rand.NewPCG(seed, 1)), Replicas: 2, Routing: RoutingRoundRobin,
			MaxLogEntries: 12, MaxCacheHistoryEvents: 8, CompactionInterval: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return s, clk
	}
	p := &changesPair{t: t, seed: seed}
	p.a, p.aclk = mk()
	p.b, p.bclk = mk()
	for _, scope := range []struct {
		gvr     schema.GroupVersionResource
		ns      string
		replica int
	}{{cmGVR, "", -1}, {cmGVR, "a", -1}, {nodeGVR, "", -1}, {cmGVR, "b", 1}} {
		r := &changesReader{la: p.a.ListerWatcher(scope.gvr, scope.ns), lb: p.b.ListerWatcher(scope.gvr, scope.ns)}
		r.la.Name, r.lb.Name, r.la.Replica, r.lb.Replica = "reader", "reader", scope.replica, scope.replica
		p.readers = append(p.readers, r)
	}
	return p
}

// randomOp draws one operation and applies it to both servers, which must answer alike: a
// ConfigMap write or delete, a Node created or deleted, a compaction, an injected LIST failure,
// or a second on both clocks.
func (p *changesPair) randomOp(rnd *rand.Rand, op int, tally *changesTally) {
	t, seed, a, b := p.t, p.seed, p.a, p.b
	t.Helper()
	ns := []string{"a", "b"}[rnd.IntN(2)]
	name := fmt.Sprintf("o%d", rnd.IntN(6))
	both := func(f func(s *Server) error) {
		ea, eb := f(a), f(b)
		if fmt.Sprint(ea) != fmt.Sprint(eb) {
			t.Fatalf("seed %d op %d: the servers differ: %v, %v", seed, op, ea, eb)
		}
	}
	switch k := rnd.IntN(10); {
	case k < 4:
		both(func(s *Server) error {
			u := cm(ns, name, map[string]string{"v": fmt.Sprint(op)})
			if _, err := s.Resource(cmGVR).Namespace(ns).Create(bg, u, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				_, err = s.Resource(cmGVR).Namespace(ns).Update(bg, u, metav1.UpdateOptions{})
				return err
			} else {
				return err
			}
		})
	case k < 6:
		both(func(s *Server) error {
			err := s.Resource(cmGVR).Namespace(ns).Delete(bg, name, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	case k < 7:
		both(func(s *Server) error {
			u := obj("Node", "", name, nil)
			u.SetAPIVersion("v1")
			_, err := s.Resource(nodeGVR).Create(bg, u, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = s.Resource(nodeGVR).Delete(bg, name, metav1.DeleteOptions{})
			}
			return err
		})
	case k < 8:
		back := uint64(rnd.IntN(3))
		both(func(s *Server) error { return s.Faults().Compact(max(s.Revision(), back+1) - back) })
	case k < 9:
		tally.failures++
		both(func(s *Server) error {
			s.Faults().FailNext(VerbList, apierrors.NewInternalError(fmt.Errorf("injected")))
			return nil
		})
	default:
		p.aclk.Step(time.Second)
		p.bclk.Step(time.Second)
	}
}

// readAll reads each scope from both servers, skipping a third of them at random so that some
// readers have several writes to catch up on: ListChangesLent applied to the reader's view must
// give exactly b's committed objects, in key order, and the contents of a's ListLent.
func (p *changesPair) readAll(rnd *rand.Rand, op int, tally *changesTally) {
	t, seed := p.t, p.seed
	t.Helper()
	for ri, r := range p.readers {
		if rnd.IntN(3) == 0 {
			continue // reads at irregular intervals: several writes to catch up on
		}
		la, errA := r.la.ListLent(metav1.ListOptions{})
		c, errB := r.lb.ListChangesLent(metav1.ListOptions{}, r.view.rev)
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("seed %d op %d reader %d: ListLent %v, ListChangesLent %v", seed, op, ri, errA, errB)
		}
		if errA != nil {
			continue
		}
		if c.Full {
			tally.full++
			if r.view.rev != 0 {
				tally.fullAgain++ // the history no longer reached back to the view
			}
		} else {
			tally.partial++
			for _, ch := range c.Changes {
				if ch.Type == watch.Deleted {
					tally.deletes++
				}
			}
		}
		r.view.apply(t, &c)
		if got, want := FormatRV(c.Revision), la.GetResourceVersion(); got != want {
			t.Fatalf("seed %d op %d reader %d: revision %s, list's %s", seed, op, ri, got, want)
		}
		// The view holds b's committed objects, as a list of b lends them.
		snap, err := p.b.Lending().Snapshot(r.lb.gvr, r.lb.ns, metav1.ListOptions{}, "observer")
		if err != nil {
			t.Fatal(err)
		}
		if !sameContents(r.view.items, snap.Items) {
			t.Fatalf("seed %d op %d reader %d: the view holds %s, the server %s", seed, op, ri, keysOf(r.view.items), keysOf(snap.Items))
		}
		if !reflect.DeepEqual(contentsOf(la.Items), contentsOf(r.view.items)) {
			t.Fatalf("seed %d op %d reader %d: the view differs from server a's list", seed, op, ri)
		}
	}
}

// sameContents reports whether x and y hold the same objects: the same content maps, in order.
func sameContents(x, y []unstructured.Unstructured) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if contentKey(x[i].Object) != contentKey(y[i].Object) {
			return false
		}
	}
	return true
}

func contentsOf(items []unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(items))
	for i := range items {
		out[i] = items[i].Object
	}
	return out
}

func keysOf(items []unstructured.Unstructured) string {
	var keys []string
	for i := range items {
		keys = append(keys, items[i].GetNamespace()+"/"+items[i].GetName()+"@"+items[i].GetResourceVersion())
	}
	return "[" + strings.Join(keys, " ") + "]"
}

func TestListChangesLentRefusesWhatItDoesNotAnswer(t *testing.T) {
	s, _ := newTestServer(t, nil)
	lw := s.ListerWatcher(cmGVR, "")
	limit := int64(1)
	for _, opts := range []metav1.ListOptions{
		{ResourceVersion: "0"}, {ResourceVersionMatch: metav1.ResourceVersionMatchExact}, {Continue: "x"},
		{Limit: limit}, {LabelSelector: "a=b"}, {FieldSelector: "metadata.name=x"}, {Watch: true},
	} {
		if _, err := lw.ListChangesLent(opts, 0); err == nil || !strings.Contains(err.Error(), "ListChangesLent answers a consistent read") {
			t.Errorf("%+v: %v", opts, err)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("refused reads made %d requests", n)
	}
	lw.Tweak = func(o *metav1.ListOptions) { o.LabelSelector = "x=y" }
	if _, err := lw.ListChangesLent(metav1.ListOptions{}, 0); err == nil {
		t.Error("a Tweak's selector was answered")
	}
}

// TestListChangesLentOfNothingAllocatesNothing: a read that finds nothing changed, most of a
// control plane's (one per served resource at each scan), makes its request and its record
// without allocating (the record log's chunks aside, one per recordChunk records), with a Tweak
// or without.
func TestListChangesLentOfNothingAllocatesNothing(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	lw := s.ListerWatcher(cmGVR, "")
	lw.Name = "scan"
	for _, tweak := range []func(*metav1.ListOptions){nil, func(*metav1.ListOptions) {}} {
		lw.Tweak = tweak
		first, err := lw.ListChangesLent(metav1.ListOptions{}, 0)
		if err != nil || !first.Full || len(first.Items) != 1 {
			t.Fatalf("first read: %+v, %v", first, err)
		}
		before := len(s.Requests())
		allocs := testing.AllocsPerRun(100, func() {
			c, err := lw.ListChangesLent(metav1.ListOptions{}, first.Revision)
			if err != nil || c.Full || len(c.Changes) != 0 || c.Revision != first.Revision {
				t.Fatalf("read of nothing: %+v, %v", c, err)
			}
		})
		if n := len(s.Requests()) - before; n != 101 {
			t.Errorf("%d reads recorded, want 101", n)
		}
		want := 0.0
		if tweak != nil {
			want = 1 // the options Tweak edits
		}
		if allocs > want {
			t.Errorf("a read of nothing (Tweak %v) allocates %v, want %v", tweak != nil, allocs, want)
		}
	}
}
