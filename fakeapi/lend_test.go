package fakeapi

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// lentWatch opens a lending watch of config maps in "ns" from the current revision.
func lentWatch(t *testing.T, s *Server, name string) *Watcher {
	t.Helper()
	lw := s.ListerWatcher(cmGVR, "ns")
	lw.Name = name
	w, err := lw.OpenWatchLent(metav1.ListOptions{ResourceVersion: FormatRV(s.rev), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func nextObject(t *testing.T, w *Watcher, want watch.EventType) *unstructured.Unstructured {
	t.Helper()
	ev, ok := w.Next()
	if !ok || ev.Type != want {
		t.Fatalf("Next = %v %v, want a %s event", ev.Type, ok, want)
	}
	return ev.Object.(*unstructured.Unstructured)
}

// TestLentObjectChangesAreNoticed changes an object the server lent, in each way a handler
// could, and checks that each read of the server that should notice it does, naming the object,
// its version, the consumer and the read; and that nothing is reported while nothing changes.
// It also shows that lent objects are not copies: were they, no change would reach the server.
func TestLentObjectChangesAreNoticed(t *testing.T) {
	changes := map[string]func(u *unstructured.Unstructured){
		"set a label in place": func(u *unstructured.Unstructured) {
			u.Object["metadata"].(map[string]any)["labels"].(map[string]any)["a"] = "changed"
		},
		"add a data key": func(u *unstructured.Unstructured) { u.Object["data"].(map[string]any)["new"] = "x" },
		"remove a data key": func(u *unstructured.Unstructured) {
			delete(u.Object["data"].(map[string]any), "k")
		},
		"same text, other type": func(u *unstructured.Unstructured) { u.Object["data"].(map[string]any)["n"] = "1" },
		"setter":                func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"x": "y"}) },
	}
	// Each read returns what the report should say noticed the change: a write to the object
	// notices it at once; reads that only copy or lend it again leave it to Lending.Check.
	reads := map[string]func(t *testing.T, s *Server) string{
		"update": func(t *testing.T, s *Server) string {
			cur, err := s.Resource(cmGVR).Namespace("ns").Get(bg, "c", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Lending().Mutation() != nil {
				t.Error("a Get noticed the change: only writes, trims and Lending.Check check")
			}
			cur.SetLabels(map[string]string{"a": "3"})
			if _, err := s.Resource(cmGVR).Namespace("ns").UpdateRV(bg, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			return "a write to it"
		},
		"delete": func(t *testing.T, s *Server) string {
			mustDelete(t, s, cmGVR, "ns", "c")
			return "a write to it"
		},
		"list, then Lending.Check": func(t *testing.T, s *Server) string {
			if _, err := s.list(cmGVR, "ns", metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if s.Lending().Mutation() != nil {
				t.Error("a copying list noticed the change")
			}
			s.Lending().Check()
			return "Lending.Check"
		},
		"another lend, then Lending.Check": func(t *testing.T, s *Server) string {
			lw := s.ListerWatcher(cmGVR, "ns")
			lw.Name = "inf2"
			if _, err := lw.ListLent(metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			if s.Lending().Mutation() != nil {
				t.Error("a second lend noticed the change")
			}
			s.Lending().Check()
			return "Lending.Check"
		},
	}
	for cname, change := range changes {
		for rname, read := range reads {
			t.Run(cname+"/"+rname, func(t *testing.T) {
				s, _ := newTestServer(t, nil)
				created := cm("ns", "c", map[string]string{"a": "1"})
				created.Object["data"].(map[string]any)["n"] = int64(1)
				mustCreate(t, s, cmGVR, created)
				w := lentWatch(t, s, "inf1")
				relabel(t, s, "c", "a", "2")
				lent := nextObject(t, w, watch.Modified)
				rv := lent.GetResourceVersion()

				// Reading and lending an unchanged object reports nothing.
				if err := s.Lending().Check(); err != nil {
					t.Fatalf("nothing changed, Lending.Check = %v", err)
				}
				change(lent)
				if err := s.Lending().Mutation(); err != nil {
					t.Fatalf("before any read: %v", err)
				}
				noticedBy := read(t, s)
				var me *MutationError
				if err := s.Lending().Mutation(); !errors.As(err, &me) {
					t.Fatalf("after %s: Lending.Mutation = %v, want a *MutationError", rname, err)
				}
				holders, lentTo := []string{"inf1"}, `lent read-only to "inf1"`
				if rname == "another lend, then Lending.Check" {
					// The second lend made inf2 a holder too (the server cannot tell that the
					// change came before it).
					holders, lentTo = []string{"inf1", "inf2"}, `lent read-only to each of "inf1", "inf2"`
				}
				want := MutationError{Resource: "configmaps", Namespace: "ns", Name: "c", ResourceVersion: rv, LentTo: "inf1", Holders: holders, NoticedBy: noticedBy}
				if diff := cmp.Diff(*me, want); diff != "" {
					t.Errorf("(-got +want):\n%s", diff)
				}
				if msg := me.Error(); !strings.Contains(msg, `configmaps ns/c at resourceVersion `+rv+`, `+lentTo) || !strings.Contains(msg, "DeepCopy") {
					t.Errorf("message %q does not say what and how to fix it", msg)
				}
			})
		}
	}
}

// TestLentToSeveralNamesEveryHolder lends one object to two informers' watches, changes it
// through the second one's copy (the same object: the server shares it), and checks that the
// report names both holders rather than only the first, which did not change it.
func TestLentToSeveralNamesEveryHolder(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "c", map[string]string{"a": "1"}))
	w1, w2 := lentWatch(t, s, "inf1"), lentWatch(t, s, "inf2")
	relabel(t, s, "c", "a", "2")
	first, second := nextObject(t, w1, watch.Modified), nextObject(t, w2, watch.Modified)
	if first != second {
		t.Fatal("the two watches got different objects: nothing is shared, so the test shows nothing")
	}
	second.SetLabels(map[string]string{"a": "changed by inf2's handler"})
	var me *MutationError
	if err := s.Lending().Check(); !errors.As(err, &me) {
		t.Fatalf("Lending.Check = %v, want a *MutationError", err)
	}
	if !slices.Equal(me.Holders, []string{"inf1", "inf2"}) || me.LentTo != "inf1" {
		t.Errorf("holders %q, lent to %q; want both informers, inf1 first", me.Holders, me.LentTo)
	}
	if msg := me.Error(); !strings.Contains(msg, `lent read-only to each of "inf1", "inf2" (any of them may have changed it)`) {
		t.Errorf("message %q does not name every holder", msg)
	}
}

// TestAnObserverIsNoHolder: an object an observer's snapshot took first and an informer then
// received is reported as lent to the informer, the one consumer that may have changed it; an
// object only the observer took is reported as lent to the observer, with no holders.
func TestAnObserverIsNoHolder(t *testing.T) {
	for _, c := range []struct {
		name       string
		informer   bool
		lentTo     string
		holders    []string
		wantInText string
	}{
		{"observer, then an informer", true, "inf1", []string{"inf1"}, `lent read-only to "inf1",`},
		{"only the observer", false, "checker", nil, `lent read-only to "checker",`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestServer(t, nil)
			mustCreate(t, s, cmGVR, cm("ns", "c", map[string]string{"a": "1"}))
			var w *Watcher
			if c.informer {
				w = lentWatch(t, s, "inf1")
			}
			relabel(t, s, "c", "a", "2")
			l, err := s.Lending().Snapshot(cmGVR, "ns", metav1.ListOptions{}, "checker")
			if err != nil || len(l.Items) != 1 {
				t.Fatalf("Lending.Snapshot = %v, %v", l, err)
			}
			obj := &l.Items[0]
			if c.informer {
				if got := nextObject(t, w, watch.Modified); contentKey(got.Object) != contentKey(obj.Object) {
					t.Fatal("the snapshot and the watch got different objects: nothing is shared, so the test shows nothing")
				}
			}
			obj.SetLabels(map[string]string{"a": "changed"})
			var me *MutationError
			if err := s.Lending().Check(); !errors.As(err, &me) {
				t.Fatalf("Lending.Check = %v, want a *MutationError", err)
			}
			if me.LentTo != c.lentTo || !slices.Equal(me.Holders, c.holders) {
				t.Errorf("lent to %q, holders %q; want %q, %q", me.LentTo, me.Holders, c.lentTo, c.holders)
			}
			if !strings.Contains(me.Error(), c.wantInText) {
				t.Errorf("message %q does not contain %q", me.Error(), c.wantInText)
			}
		})
	}
}

// relabel updates config map ns/name with the one label key=value, as a client does: read,
// change, write.
func relabel(t *testing.T, s *Server, name, key, value string) {
	t.Helper()
	cur := mustGet(t, s, name)
	cur.SetLabels(map[string]string{key: value})
	mustUpdate(t, s, cmGVR, cur)
}

func mustGet(t *testing.T, s *Server, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := s.Resource(cmGVR).Namespace("ns").Get(bg, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestLentListItemsAndDeletedEventsAreGuarded: a list item shares the stored object's content,
// and a DELETED event's object shares its nested maps with the last state; changing either is
// noticed, the second one even though the DELETED object itself is never read again.
func TestLentListItemsAndDeletedEventsAreGuarded(t *testing.T) {
	t.Run("list item", func(t *testing.T) {
		s, _ := newTestServer(t, nil)
		mustCreate(t, s, cmGVR, cm("ns", "c", nil))
		lw := s.ListerWatcher(cmGVR, "ns")
		lw.Name = "lister"
		l, err := lw.ListLent(metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("ListLent = %v, %v", l, err)
		}
		l.Items[0].Object["data"].(map[string]any)["k"] = "changed"
		if err := s.Lending().Check(); err == nil || !strings.Contains(err.Error(), `lent read-only to "lister"`) {
			t.Fatalf("Lending.Mutation = %v", err)
		}
	})
	t.Run("deleted event", func(t *testing.T) {
		s, _ := newTestServer(t, nil)
		mustCreate(t, s, cmGVR, cm("ns", "c", nil))
		w := lentWatch(t, s, "inf1")
		mustDelete(t, s, cmGVR, "ns", "c")
		gone := nextObject(t, w, watch.Deleted)
		gone.Object["data"].(map[string]any)["k"] = "changed" // shared with the last state
		if err := s.Lending().Check(); err == nil {
			t.Fatal("a change through a DELETED event's shared map went unnoticed")
		}
	})
}

// TestLendingCopiesNothing: a lending watch hands out the committed object itself (the same
// content map twice for two lending watches), a copying one a new map; a lending LIST
// allocates no copy of its items.
func TestLendingCopiesNothing(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	w1, w2 := lentWatch(t, s, "inf1"), lentWatch(t, s, "inf2")
	plain := mustWatch(t, s, cmGVR, "ns", metav1.ListOptions{ResourceVersion: FormatRV(s.rev)})
	relabel(t, s, "c", "x", "1")
	a, b := nextObject(t, w1, watch.Modified), nextObject(t, w2, watch.Modified)
	c := nextObject(t, plain, watch.Modified)
	a.Object["probe"] = true // only to see which maps are one: undone before the server reads
	_, inB := b.Object["probe"]
	_, inC := c.Object["probe"]
	delete(a.Object, "probe")
	if !inB || inC {
		t.Errorf("lent objects shared: %v (want true), copy shared: %v (want false)", inB, inC)
	}
	lw := s.ListerWatcher(cmGVR, "ns")
	lw.Name = "lister"
	for range 100 {
		mustCreate(t, s, cmGVR, cm("ns", fmt.Sprintf("n%d", s.rev), nil))
	}
	lent := testing.AllocsPerRun(20, func() { _, _ = lw.ListLent(metav1.ListOptions{}) })
	copied := testing.AllocsPerRun(20, func() { _, _ = lw.List(metav1.ListOptions{}) })
	if lent > copied/5 {
		t.Errorf("a lending LIST of 101 items allocates %v, a copying one %v: items are copied", lent, copied)
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatal(err)
	}
}

// TestLentRecordsAreForgotten: the book of lent objects stays bounded by the history the
// server holds; what it still holds keeps its record; and the trimming that forgets a record
// checks it first.
func TestLentRecordsAreForgotten(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxLogEntries = 200 })
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	w := lentWatch(t, s, "inf1")
	var last *unstructured.Unstructured
	for i := range 5000 {
		relabel(t, s, "c", "i", fmt.Sprint(i))
		last = nextObject(t, w, watch.Modified)
		if n := len(s.lent.records); n > 201 {
			t.Fatalf("after %d lends the book holds %d records for a log of at most 200", i+1, n)
		}
	}
	if _, kept := s.lent.records[contentKey(last.Object)]; !kept || len(s.lent.records) < 100 {
		t.Fatalf("current version kept: %v; %d records kept", kept, len(s.lent.records))
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatal(err)
	}
	// d is lent, changed, and deleted: the delete notices.
	mustCreate(t, s, cmGVR, cm("ns", "d", nil))
	old := nextObject(t, w, watch.Added)
	old.Object["data"].(map[string]any)["k"] = "changed"
	mustDelete(t, s, cmGVR, "ns", "d") // the server reads d (noticed); start again with e
	if err := s.Lending().Mutation(); err == nil || !strings.Contains(err.Error(), "configmaps ns/d") {
		t.Fatalf("Lending.Mutation = %v", err)
	}

	s, _ = newTestServer(t, func(c *Config) { c.MaxLogEntries = 200 })
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	mustCreate(t, s, cmGVR, cm("ns", "e", nil))
	w = lentWatch(t, s, "inf1")
	relabel(t, s, "e", "x", "1")
	gone := nextObject(t, w, watch.Modified)
	relabel(t, s, "e", "x", "2") // e's lent version is history now
	nextObject(t, w, watch.Modified)
	gone.Object["data"].(map[string]any)["k"] = "changed"
	for i := range 400 { // enough writes to c to trim e's old version
		relabel(t, s, "c", "i", fmt.Sprint(i))
	}
	if err := s.Lending().Mutation(); err == nil || !strings.Contains(err.Error(), "configmaps ns/e") || !strings.Contains(err.Error(), "trimming") {
		t.Fatalf("Lending.Mutation = %v", err)
	}
}

// TestFirstLentChangeIsReportedInLendingOrder: with several changed objects, Lending.Check reports
// the one lent first, whatever Go's map order.
func TestFirstLentChangeIsReportedInLendingOrder(t *testing.T) {
	for range 20 {
		s, _ := newTestServer(t, nil)
		for i := range 10 {
			mustCreate(t, s, cmGVR, cm("ns", fmt.Sprintf("c%d", 9-i), nil))
		}
		lw := s.ListerWatcher(cmGVR, "ns")
		lw.Name = "lister"
		l, err := lw.ListLent(metav1.ListOptions{}) // lent in key order: c0 first
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			l.Items[i].Object["data"].(map[string]any)["k"] = "changed"
		}
		if err := s.Lending().Check(); err == nil || !strings.Contains(err.Error(), "configmaps ns/c0 ") {
			t.Fatalf("Lending.Check = %v, want c0 reported", err)
		}
	}
}

// TestFingerprintTellsContentsApart: equal contents hash equally however their maps were built,
// and changing any one leaf, key or type of a random object changes the fingerprint.
func TestFingerprintTellsContentsApart(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(8); {
		case k == 0 && depth < 4:
			m := map[string]any{}
			for i := range r.IntN(10) {
				m[fmt.Sprintf("k%d", i)] = gen(depth + 1)
			}
			return m
		case k == 1 && depth < 4:
			l := []any{}
			for range r.IntN(5) {
				l = append(l, gen(depth+1))
			}
			return l
		case k == 2:
			return int64(r.IntN(3))
		case k == 3:
			return float64(r.IntN(3))
		case k == 4:
			return r.IntN(2) == 0
		case k == 5:
			return nil
		default:
			return fmt.Sprint(r.IntN(3))
		}
	}
	// leaves lists the paths to every value, so each can be changed in turn.
	type path struct {
		m map[string]any
		k string
		l []any
		i int
	}
	var leaves func(v any, out *[]path)
	leaves = func(v any, out *[]path) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				*out = append(*out, path{m: x, k: k})
				leaves(e, out)
			}
		case []any:
			for i, e := range x {
				*out = append(*out, path{l: x, i: i})
				leaves(e, out)
			}
		}
	}
	for range 300 {
		top := map[string]any{"a": gen(0), "b": gen(0), "c": gen(0)}
		sum := fingerprint(top)
		if again := fingerprint(runtime.DeepCopyJSON(top)); again != sum {
			t.Fatalf("a copy hashes to %x, the original to %x", again, sum)
		}
		var ps []path
		leaves(top, &ps)
		for _, p := range ps {
			for _, replacement := range []any{"changed", int64(7), nil, map[string]any{}, []any{}, int(1)} {
				var old any
				if p.m != nil {
					old = p.m[p.k]
					p.m[p.k] = replacement
				} else {
					old = p.l[p.i]
					p.l[p.i] = replacement
				}
				changed := fingerprint(top)
				same := sameValue(old, replacement)
				if p.m != nil {
					p.m[p.k] = old
				} else {
					p.l[p.i] = old
				}
				if !same && changed == sum {
					t.Fatalf("replacing %v by %#v left the fingerprint unchanged", old, replacement)
				}
			}
			if p.m != nil { // a removed key
				old := p.m[p.k]
				delete(p.m, p.k)
				if fingerprint(top) == sum {
					t.Fatalf("removing key %q left the fingerprint unchanged", p.k)
				}
				p.m[p.k] = old
			}
		}
		if fingerprint(top) != sum {
			t.Fatal("restoring every change did not restore the fingerprint")
		}
	}
}

// sameValue reports whether a and b are the same normalised value for this test's replacements.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && len(x) == 0 && len(y) == 0
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == 0 && len(y) == 0
	}
	return a == b
}

// TestEventsOutlivingTheirHistoryAreCopies: an event that waited in a watch's queue while the
// server trimmed its revision is handed out as a copy, since the server would keep a record of
// an object it no longer holds forever; events still in the history are lent.
func TestEventsOutlivingTheirHistoryAreCopies(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxLogEntries = 50 })
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	w := lentWatch(t, s, "inf1")
	for i := range 200 {
		relabel(t, s, "c", "i", fmt.Sprint(i))
	}
	stale := nextObject(t, w, watch.Modified) // revision 3, long trimmed
	if len(s.lent.records) != 0 {
		t.Fatalf("a trimmed event was lent: %d records", len(s.lent.records))
	}
	stale.Object["data"].(map[string]any)["k"] = "changed" // the watch's own copy
	for range 199 {
		nextObject(t, w, watch.Modified)
	}
	if n := len(s.lent.records); n == 0 || n > 50 {
		t.Fatalf("%d records after lending the events still in the history", n)
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatal(err)
	}
}

// TestAnOldCurrentVersionKeepsItsRecord: trimming the entry that wrote an object does not end
// the record of the object while it is still the current version of its key.
func TestAnOldCurrentVersionKeepsItsRecord(t *testing.T) {
	s, _ := newTestServer(t, func(c *Config) { c.MaxLogEntries = 50 })
	mustCreate(t, s, cmGVR, cm("ns", "old", nil))
	w := lentWatch(t, s, "inf1")
	mustCreate(t, s, cmGVR, cm("ns", "other", nil))
	nextObject(t, w, watch.Added)
	lw := s.ListerWatcher(cmGVR, "ns")
	lw.Name = "lister"
	l, err := lw.ListLent(metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 { // the entry that created "old" is trimmed; "old" stays current
		relabel(t, s, "other", "i", fmt.Sprint(i))
	}
	if err := s.Lending().Mutation(); err != nil {
		t.Fatal(err)
	}
	l.Items[0].Object["data"].(map[string]any)["k"] = "changed" // "old", lent by the list
	mustDelete(t, s, cmGVR, "ns", "old")
	if err := s.Lending().Mutation(); err == nil || !strings.Contains(err.Error(), "configmaps ns/old") {
		t.Fatalf("Lending.Mutation = %v", err)
	}
}

// TestSnapshotLent: an observer's lent snapshot shares the committed objects (a change is
// noticed) and records nothing else; an empty observer name is refused.
func TestSnapshotLent(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "c", map[string]string{"a": "1"}))
	mustCreate(t, s, cmGVR, cm("ns", "d", map[string]string{"a": "2"}))
	if _, err := s.Lending().Snapshot(cmGVR, "ns", metav1.ListOptions{}, ""); err == nil || !strings.Contains(err.Error(), "fakeapi: Lending.Snapshot: empty observer name") {
		t.Fatalf("empty name: %v", err)
	}
	if _, err := s.Lending().Snapshot(cmGVR, "ns", metav1.ListOptions{LabelSelector: "a in (("}, "checker"); err == nil || !strings.HasPrefix(err.Error(), "fakeapi: Lending.Snapshot: ") {
		t.Fatalf("bad selector: %v", err)
	}
	recs := len(s.Requests())
	l, err := s.Lending().Snapshot(cmGVR, "ns", metav1.ListOptions{LabelSelector: "a=2"}, "checker")
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "d" {
		t.Fatalf("Lending.Snapshot = %v, %v", l, err)
	}
	if len(s.Requests()) != recs {
		t.Errorf("a snapshot recorded a request")
	}
	l.Items[0].SetLabels(map[string]string{"a": "3"})
	if err := s.Lending().Check(); err == nil || !strings.Contains(err.Error(), `configmaps ns/d at resourceVersion 3, lent read-only to "checker"`) {
		t.Fatalf("Lending.Check = %v", err)
	}
}

// TestCheckSelectors: the selector check a host runs before it builds an informer reads no
// object and answers as a LIST would.
func TestCheckSelectors(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "c", nil))
	for _, c := range []struct {
		gvr  schema.GroupVersionResource
		sel  metav1.ListOptions
		want string
	}{
		{cmGVR, metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name=c"}, ""},
		{cmGVR, metav1.ListOptions{LabelSelector: "app in (("}, "fakeapi: CheckSelectors: "},
		{cmGVR, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}, "fakeapi: CheckSelectors: "},
		{podsGVR, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}, ""},
		{schema.GroupVersionResource{Group: "x", Version: "v1", Resource: "ys"}, metav1.ListOptions{}, "fakeapi: CheckSelectors: the server does not serve"},
	} {
		err := s.CheckSelectors(c.gvr, c.sel)
		if (c.want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("CheckSelectors(%v, %+v) = %v, want %q", c.gvr, c.sel, err, c.want)
		}
	}
	if len(s.Requests()) != 1 { // the create
		t.Errorf("a selector check was recorded as a request")
	}
}

// TestCheckLentObject: a host can check one lent object right after the code that may have
// changed it, whether it holds the object lent by a watch or a list item around it; a copy, or
// an object never lent, checks nothing.
func TestCheckLentObject(t *testing.T) {
	s, _ := newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	mustCreate(t, s, cmGVR, cm("ns", "b", nil))
	lw := s.ListerWatcher(cmGVR, "ns")
	lw.Name = "inf1"
	l, err := lw.ListLent(metav1.ListOptions{})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("ListLent = %v, %v", l, err)
	}
	w := lentWatch(t, s, "inf1")
	relabel(t, s, "b", "x", "1")
	watched := nextObject(t, w, watch.Modified)
	copied := mustGet(t, s, "a")
	copied.SetLabels(map[string]string{"copy": "mine"})
	for _, u := range []*unstructured.Unstructured{&l.Items[0], watched, copied, cm("ns", "never", nil), nil} {
		if err := s.Lending().CheckObject(u, "the test"); err != nil {
			t.Fatalf("nothing lent was changed: %v", err)
		}
	}
	l.Items[0].SetLabels(map[string]string{"x": "changed"}) // a, as a list item
	if err := s.Lending().CheckObject(&l.Items[0], "the handler's step"); err == nil || !strings.Contains(err.Error(), "configmaps ns/a at resourceVersion 2") || !strings.Contains(err.Error(), "noticed by the handler's step") {
		t.Fatalf("a changed list item: %v", err)
	}

	s, _ = newTestServer(t, nil)
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	w = lentWatch(t, s, "inf1")
	relabel(t, s, "a", "x", "1")
	watched = nextObject(t, w, watch.Modified)
	watched.SetAnnotations(map[string]string{"seen": "yes"})
	if err := s.Lending().CheckObject(watched, "the handler's step"); err == nil || !strings.Contains(err.Error(), "configmaps ns/a at resourceVersion 3") {
		t.Fatalf("a changed watch event: %v", err)
	}
}

// Goal: fingerprint tells apart strings that differ in one bit, in any byte of any word, or by
// a trailing zero byte (hashString reads eight bytes at a time). Method: for every length up to
// 40, a random string and every one-bit change of it, each with and without a trailing "\x00",
// and for 16- and 24-byte strings every two-bit change too (a plain multiply per word let two
// changes in consecutive words cancel); all fingerprints must differ.
func TestFingerprintTellsStringsApart(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	seen := map[uint64]string{}
	add := func(s string) {
		f := fingerprint(s)
		if prev, ok := seen[f]; ok && prev != s {
			t.Fatalf("fingerprint(%q) = fingerprint(%q)", s, prev)
		}
		seen[f] = s
	}
	for n := 0; n <= 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		add(string(b))
		add(string(b) + "\x00")
		for i := range b {
			for bit := range 8 {
				c := slices.Clone(b)
				c[i] ^= 1 << bit
				add(string(c))
				add(string(c) + "\x00")
			}
		}
		if !slices.Contains([]int{3, 5, 7, 13, 16, 24}, n) {
			continue
		}
		for i := range n * 8 {
			for j := i + 1; j < n*8; j++ {
				c := slices.Clone(b)
				c[i/8] ^= 1 << (i % 8)
				c[j/8] ^= 1 << (j % 8)
				add(string(c))
			}
		}
	}
}
