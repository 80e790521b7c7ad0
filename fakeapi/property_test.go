package fakeapi

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	testclock "k8s.io/utils/clock/testing"
)

// modelWrite is one effective write as the test saw it: its revision, key and whether the old
// and new states carry the label x=1 (nil state: absent).
type modelWrite struct {
	rev      uint64
	ns, name string
	typ      watch.EventType
	oldX     *bool
	newX     *bool
}

type propWatch struct {
	w        *Watcher
	ns       string
	selector bool // label selector x=1
	from     uint64
	got      []string // delivered non-bookmark events "TYPE ns/name rv"
	lastRV   uint64
	rvs      []uint64 // every delivered RV (events and bookmarks), candidates for resumption
	errored  bool
	// floorAtOpen is the compaction floor when the watch was opened.
	floorAtOpen uint64
}

// propertyStats shows the property test is not vacuous.
type propertyStats struct{ events, bookmarks, expired, watches int }

// expected renders what a watch from p.from must deliver for the model's writes, applying the
// namespace scope and the selector-transition table of fakeapi.md §4.4.
func (p *propWatch) expected(writes []modelWrite) []string {
	var out []string
	for _, wr := range writes {
		if wr.rev <= p.from || (p.ns != "" && wr.ns != p.ns) {
			continue
		}
		in := func(x *bool) bool { return x != nil && (!p.selector || *x) }
		oldIn, newIn := in(wr.oldX), in(wr.newX)
		var typ watch.EventType
		switch {
		case wr.typ == watch.Deleted && oldIn:
			typ = watch.Deleted
		case wr.typ == watch.Deleted:
			continue
		case oldIn && newIn:
			typ = watch.Modified
		case newIn:
			typ = watch.Added
		case oldIn:
			typ = watch.Deleted
		default:
			continue
		}
		out = append(out, fmt.Sprintf("%s %s/%s %d", typ, wr.ns, wr.name, wr.rev))
	}
	return out
}

// TestWatchGuaranteesProperty checks the watch guarantees of fakeapi.md §4.3 under random
// interleavings of writes, compactions, burns, bookmarks, deadlines, faults and re-watches from
// delivered RVs, for many seeds: every watch delivers a prefix of exactly the events its start RV
// and scope call for (ordered, unique, no gaps), bookmarks never go backwards, a watch that is
// still open at the end has delivered everything, and a re-watch is refused only below the floor.
func TestWatchGuaranteesProperty(t *testing.T) {
	seeds := 500
	if testing.Short() {
		seeds = 50
	}
	var stats propertyStats
	for seed := 0; seed < seeds; seed++ {
		if err := runProperty(uint64(seed), &stats); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	t.Logf("%d seeds: %d watches, %d events, %d bookmarks, %d expired starts", seeds, stats.watches, stats.events, stats.bookmarks, stats.expired)
	if stats.events == 0 || stats.bookmarks == 0 || stats.expired == 0 {
		t.Errorf("vacuous run: %+v", stats)
	}
}

// runProperty runs one seed of TestWatchGuaranteesProperty: a watch from RV 1, then 120 random
// steps with every watch checked after each, then every watch drained and checked complete.
func runProperty(seed uint64, stats *propertyStats) error {
	rnd := rand.New(rand.NewPCG(seed, 99))
	s, clk := newTestServer(nopTB{}, func(c *Config) {
		c.Rand = rand.New(rand.NewPCG(seed, 7))
		c.BookmarkInterval = time.Second
		c.CompactionInterval = -1
		c.MaxWatchEvents = 1 + rnd.IntN(40)
		c.MaxLogEntries = 8 + rnd.IntN(64)
	})
	r := &propertyRun{rnd: rnd, s: s, clk: clk, stats: stats, state: map[string]*bool{}}
	if err := r.open(1); err != nil {
		return err
	}
	for step := 0; step < 120; step++ {
		if err := r.step(); err != nil {
			return err
		}
	}
	for _, p := range r.watches {
		if err := r.pull(p, 1<<20); err != nil {
			return err
		}
		if err := r.check(p, true); err != nil {
			return err
		}
		p.w.Stop()
	}
	return nil
}

// propertyRun is one seed's server, its model (the state and every write that took a revision)
// and the watches opened so far.
type propertyRun struct {
	rnd     *rand.Rand
	s       *Server
	clk     *testclock.FakeClock
	stats   *propertyStats
	state   map[string]*bool // "ns/name" -> x=1?
	writes  []modelWrite
	watches []*propWatch
}

func (r *propertyRun) rc(ns string) *ResourceClient { return r.s.Resource(cmGVR).Namespace(ns) }

// record adds a write to the model, unless it was a no-op, which consumes no revision (§2).
func (r *propertyRun) record(before uint64, ns, name string, typ watch.EventType, old, nw *bool) {
	if r.s.Revision() == before {
		return
	}
	r.writes = append(r.writes, modelWrite{rev: r.s.Revision(), ns: ns, name: name, typ: typ, oldX: old, newX: nw})
}

// open opens a watch from RV from, of a random scope, selector and bookmark setting.
func (r *propertyRun) open(from uint64) error {
	rnd, s := r.rnd, r.s
	p := &propWatch{ns: []string{"", "a"}[rnd.IntN(2)], selector: rnd.IntN(2) == 0, from: from, floorAtOpen: s.CompactedRevision()}
	r.stats.watches++
	opts := metav1.ListOptions{ResourceVersion: strconv.FormatUint(from, 10), AllowWatchBookmarks: rnd.IntN(2) == 0}
	if p.selector {
		opts.LabelSelector = "x=1"
	}
	w, err := s.OpenWatch(cmGVR, p.ns, opts)
	if err != nil {
		return fmt.Errorf("open from %d: %v", from, err)
	}
	p.w, p.lastRV = w, from
	r.watches = append(r.watches, p)
	return nil
}

// pull reads up to n events of p's watch, checking each as it comes: the only ERROR allowed, RVs
// that never go back, an event's RV above the last one.
func (r *propertyRun) pull(p *propWatch, n int) error {
	for i := 0; i < n; i++ {
		ev, ok := p.w.Next()
		if !ok {
			return nil
		}
		switch o := ev.Object.(type) {
		case *metav1.Status:
			// The only ERROR a watch may see here is the start-point 410, as its first event,
			// and only when its start RV was below floor-1 when it was opened (§4.7).
			if o.Code != 410 || len(p.rvs) > 0 || p.from+1 >= p.floorAtOpen {
				return fmt.Errorf("watch %d from %d (floor %d): unexpected error %d %s", p.w.ID(), p.from, p.floorAtOpen, o.Code, o.Message)
			}
			r.stats.expired++
			p.errored = true
		case *unstructured.Unstructured:
			rv, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
			if err != nil {
				return fmt.Errorf("bad RV %q", o.GetResourceVersion())
			}
			if rv < p.lastRV || (ev.Type != watch.Bookmark && rv == p.lastRV) {
				return fmt.Errorf("watch %d: %s at RV %d after RV %d", p.w.ID(), ev.Type, rv, p.lastRV)
			}
			p.lastRV = rv
			p.rvs = append(p.rvs, rv)
			if ev.Type != watch.Bookmark {
				p.got = append(p.got, render(ev))
				r.stats.events++
			} else {
				r.stats.bookmarks++
			}
		}
	}
	return nil
}

// check compares what p delivered with what the model says it must: a prefix of it, all of it if
// complete and the watch is still open.
func (r *propertyRun) check(p *propWatch, complete bool) error {
	want := p.expected(r.writes)
	if p.errored {
		return nil
	}
	if len(p.got) > len(want) {
		return fmt.Errorf("watch %d from %d: got %v, want prefix of %v", p.w.ID(), p.from, p.got, want)
	}
	for i := range p.got {
		if p.got[i] != want[i] {
			return fmt.Errorf("watch %d from %d (ns %q sel %v): event %d is %q, want %q\ngot  %v\nwant %v", p.w.ID(), p.from, p.ns, p.selector, i, p.got[i], want[i], p.got, want)
		}
	}
	if complete && !p.w.Done() && len(p.got) != len(want) {
		return fmt.Errorf("watch %d from %d: open and drained but got %d of %d events", p.w.ID(), p.from, len(p.got), len(want))
	}
	return nil
}

// step draws one step: a write to a random object, a compaction, burnt revisions, a re-watch from
// a delivered RV, time passing, a watch closed, or events pulled from a watch; then it checks
// every watch against the model.
func (r *propertyRun) step() error {
	rnd, s, clk := r.rnd, r.s, r.clk
	nss, namesPool := []string{"a", "b"}, []string{"p", "q", "r", "s"}
	ns, name := nss[rnd.IntN(2)], namesPool[rnd.IntN(len(namesPool))]
	x := rnd.IntN(2) == 0
	before := s.Revision()
	switch op := rnd.IntN(10); {
	case op < 4: // write
		if skip, err := r.write(ns, name, x, before); err != nil || skip {
			return err
		}
	case op == 4:
		s.Faults().Compact(s.CompactedRevision() + uint64(rnd.IntN(int(s.Revision()-s.CompactedRevision())+1)))
	case op == 5:
		s.Faults().BurnRevisions(uint64(rnd.IntN(3)))
	case op == 6: // resume a watch from one of its delivered RVs, or from the start
		p := r.watches[rnd.IntN(len(r.watches))]
		from := p.from
		if len(p.rvs) > 0 {
			from = p.rvs[rnd.IntN(len(p.rvs))]
		}
		if err := r.open(from); err != nil {
			return err
		}
	case op == 7:
		clk.Step(time.Duration(rnd.IntN(1500)) * time.Millisecond)
		s.Advance()
	case op == 8 && len(r.watches) > 0:
		p := r.watches[rnd.IntN(len(r.watches))]
		if rnd.IntN(5) == 0 {
			s.Faults().CloseWatch(p.w.ID(), nil)
		}
	default:
		p := r.watches[rnd.IntN(len(r.watches))]
		if err := r.pull(p, rnd.IntN(6)); err != nil {
			return err
		}
	}
	for _, p := range r.watches {
		if err := r.check(p, false); err != nil {
			return err
		}
	}
	return nil
}

// write creates ns/name with label x if it does not exist, else deletes it (one time in four) or
// relabels it, and records the write in the model. A create or a delete ends the step without
// the checks (skip), as the loop this was taken from did.
func (r *propertyRun) write(ns, name string, x bool, before uint64) (skip bool, err error) {
	key := ns + "/" + name
	rnd := r.rnd
	cur, err := r.rc(ns).Get(bg, name, metav1.GetOptions{})
	if err != nil {
		u := cm(ns, name, map[string]string{"x": map[bool]string{true: "1", false: "2"}[x]})
		if _, err := r.rc(ns).Create(bg, u, metav1.CreateOptions{}); err != nil {
			return false, err
		}
		r.record(before, ns, name, watch.Added, nil, &x)
		r.state[key] = &x
		return true, nil
	}
	if rnd.IntN(4) == 0 {
		if err := r.rc(ns).Delete(bg, name, metav1.DeleteOptions{}); err != nil {
			return false, err
		}
		r.record(before, ns, name, watch.Deleted, r.state[key], nil)
		delete(r.state, key)
		return true, nil
	}
	cur.SetLabels(map[string]string{"x": map[bool]string{true: "1", false: "2"}[x]})
	if _, err := r.rc(ns).Update(bg, cur, metav1.UpdateOptions{}); err != nil {
		return false, err
	}
	r.record(before, ns, name, watch.Modified, r.state[key], &x)
	r.state[key] = &x
	return false, nil
}

// nopTB lets newTestServer run outside a *testing.T (the property loop reports its own errors).
type nopTB struct{ testing.TB }

func (nopTB) Helper()               {}
func (nopTB) Fatalf(string, ...any) { panic("fakeapi: test server setup failed") }
