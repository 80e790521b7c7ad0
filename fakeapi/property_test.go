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

func runProperty(seed uint64, stats *propertyStats) error {
	rnd := rand.New(rand.NewPCG(seed, 99))
	s, clk := newTestServer(nopTB{}, func(c *Config) {
		c.Rand = rand.New(rand.NewPCG(seed, 7))
		c.BookmarkInterval = time.Second
		c.CompactionInterval = -1
		c.MaxWatchEvents = 1 + rnd.IntN(40)
		c.MaxLogEntries = 8 + rnd.IntN(64)
	})
	state := map[string]*bool{} // "ns/name" -> x=1?
	var writes []modelWrite
	var watches []*propWatch
	nss, namesPool := []string{"a", "b"}, []string{"p", "q", "r", "s"}
	rc := func(ns string) *ResourceClient { return s.Resource(cmGVR).Namespace(ns) }
	record := func(before uint64, ns, name string, typ watch.EventType, old, nw *bool) {
		if s.Revision() == before {
			return // a no-op write consumes no revision (§2)
		}
		writes = append(writes, modelWrite{rev: s.Revision(), ns: ns, name: name, typ: typ, oldX: old, newX: nw})
	}
	open := func(from uint64) error {
		p := &propWatch{ns: []string{"", "a"}[rnd.IntN(2)], selector: rnd.IntN(2) == 0, from: from, floorAtOpen: s.CompactedRevision()}
		stats.watches++
		opts := metav1.ListOptions{ResourceVersion: strconv.FormatUint(from, 10), AllowWatchBookmarks: rnd.IntN(2) == 0}
		if p.selector {
			opts.LabelSelector = "x=1"
		}
		w, err := s.OpenWatch(cmGVR, p.ns, opts)
		if err != nil {
			return fmt.Errorf("open from %d: %v", from, err)
		}
		p.w, p.lastRV = w, from
		watches = append(watches, p)
		return nil
	}
	pull := func(p *propWatch, n int) error {
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
				stats.expired++
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
					stats.events++
				} else {
					stats.bookmarks++
				}
			}
		}
		return nil
	}
	check := func(p *propWatch, complete bool) error {
		want := p.expected(writes)
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
	if err := open(1); err != nil {
		return err
	}
	for step := 0; step < 120; step++ {
		ns, name := nss[rnd.IntN(2)], namesPool[rnd.IntN(len(namesPool))]
		key := ns + "/" + name
		x := rnd.IntN(2) == 0
		before := s.Revision()
		switch op := rnd.IntN(10); {
		case op < 4: // write
			cur, err := rc(ns).Get(bg, name, metav1.GetOptions{})
			if err != nil {
				u := cm(ns, name, map[string]string{"x": map[bool]string{true: "1", false: "2"}[x]})
				if _, err := rc(ns).Create(bg, u, metav1.CreateOptions{}); err != nil {
					return err
				}
				record(before, ns, name, watch.Added, nil, &x)
				state[key] = &x
				continue
			}
			if rnd.IntN(4) == 0 {
				if err := rc(ns).Delete(bg, name, metav1.DeleteOptions{}); err != nil {
					return err
				}
				record(before, ns, name, watch.Deleted, state[key], nil)
				delete(state, key)
				continue
			}
			cur.SetLabels(map[string]string{"x": map[bool]string{true: "1", false: "2"}[x]})
			if _, err := rc(ns).Update(bg, cur, metav1.UpdateOptions{}); err != nil {
				return err
			}
			record(before, ns, name, watch.Modified, state[key], &x)
			state[key] = &x
		case op == 4:
			s.Faults().Compact(s.CompactedRevision() + uint64(rnd.IntN(int(s.Revision()-s.CompactedRevision())+1)))
		case op == 5:
			s.Faults().BurnRevisions(uint64(rnd.IntN(3)))
		case op == 6: // resume a watch from one of its delivered RVs, or from the start
			p := watches[rnd.IntN(len(watches))]
			from := p.from
			if len(p.rvs) > 0 {
				from = p.rvs[rnd.IntN(len(p.rvs))]
			}
			if err := open(from); err != nil {
				return err
			}
		case op == 7:
			clk.Step(time.Duration(rnd.IntN(1500)) * time.Millisecond)
			s.Advance()
		case op == 8 && len(watches) > 0:
			p := watches[rnd.IntN(len(watches))]
			if rnd.IntN(5) == 0 {
				s.Faults().CloseWatch(p.w.ID(), nil)
			}
		default:
			p := watches[rnd.IntN(len(watches))]
			if err := pull(p, rnd.IntN(6)); err != nil {
				return err
			}
		}
		for _, p := range watches {
			if err := check(p, false); err != nil {
				return err
			}
		}
	}
	for _, p := range watches {
		if err := pull(p, 1<<20); err != nil {
			return err
		}
		if err := check(p, true); err != nil {
			return err
		}
		p.w.Stop()
	}
	return nil
}

// nopTB lets newTestServer run outside a *testing.T (the property loop reports its own errors).
type nopTB struct{ testing.TB }

func (nopTB) Helper()               {}
func (nopTB) Fatalf(string, ...any) { panic("fakeapi: test server setup failed") }
