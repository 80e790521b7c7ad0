package oracle

import (
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// parseTrace reads a hand-built trace in the narration's form, one event a line:
// "+1.5s inf1/h1 OnAdd obj=default/a rv=2 initial=true". Steps count the lines.
func parseTrace(t *testing.T, text string) []sim.Event {
	t.Helper()
	var out []sim.Event
	i := -1
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		i++
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("line %d: %q: want time actor kind fields...", i+1, line)
		}
		d, err := time.ParseDuration(strings.TrimPrefix(f[0], "+"))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		e := sim.Event{Step: int64(i + 1), Time: d, Actor: f[1], Kind: f[2]}
		for _, kv := range f[3:] {
			k, v, _ := strings.Cut(kv, "=")
			e.Fields = append(e.Fields, sim.F(k, v))
		}
		out = append(out, e)
	}
	return out
}

// expect checks a hand-built trace against one oracle: no violation when want is "", else a
// violation of that oracle whose message contains want, at the event on line atLine.
func expect(t *testing.T, name, trace, want string, atLine int) {
	t.Helper()
	v, err := CheckTrace(parseTrace(t, trace), name)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case want == "" && v != nil:
		t.Fatalf("violation on a correct trace:\n%s", v.Report())
	case want != "" && v == nil:
		t.Fatalf("no violation, want one containing %q", want)
	case want != "" && (v.Oracle != name || !strings.Contains(v.Message, want)):
		t.Fatalf("violation %s: %q, want %s containing %q", v.Oracle, v.Message, name, want)
	case want != "" && atLine > 0 && v.Event.Step != int64(atLine):
		t.Fatalf("violation at line %d (%s), want line %d", v.Event.Step, v.Event, atLine)
	}
}

// The initial sync of T1 with one pod: the common start of the hand-built traces.
const t1 = `
+0s inf1/h1 register
+0s inf1 start
+0s inf1/reflector LIST rv=0 limit=500
+0.01s inf1/reflector listed items=1 rv=2
+0.01s inf1/queue pop delta=ReplacedAll rv=2 n=1 init=true
+0.01s inf1/queue cache-replace n=1 rv=2
+0.01s inf1/queue buffer to=h1 call=add obj=default/a@2 init=true
+0.01s inf1 synced
+0.01s inf1/h1 OnAdd obj=default/a rv=2 initial=true
+0.01s inf1/h1 synced
`

// Goal: the late-join oracle passes T7's shape and catches each way a join can go wrong.
// Method: hand-built traces, each differing from the correct one in one event.
func TestLateJoinHandBuilt(t *testing.T) {
	join := t1 + `
+1s inf1/late join snapshot=1
+1s inf1/queue buffer to=late call=add obj=default/a@2 init=true
+1.1s inf1/late OnAdd obj=default/a rv=2 initial=true
+1.1s inf1/late synced
+2s inf1/reflector MODIFIED obj=default/a rv=3
+2s inf1/queue pop delta=Updated obj=default/a@3
+2s inf1/queue cache-update obj=default/a@3
+2s inf1/queue buffer to=h1,late call=update obj=default/a rv=2->3
+2s inf1/late OnUpdate obj=default/a rv=2->3
+2s inf1/h1 OnUpdate obj=default/a rv=2->3
`
	expect(t, LateJoin, join, "", 0)
	expect(t, LateJoin, strings.Replace(join, "join snapshot=1", "join snapshot=0", 1), "snapshot of 0 object(s), but the cache holds 1", 11)
	expect(t, LateJoin, strings.Replace(join, "obj=default/a@2 init=true\n+1.1s", "obj=default/a@1 init=true\n+1.1s", 1), "but the cache holds rv=2", 12)
	expect(t, LateJoin, strings.Replace(join, "to=h1,late call=update", "to=h1 call=update", 1), "buffered for [h1], but the current registrations are [h1,late] (a gap)", 18)
	expect(t, LateJoin, join+"+2s inf1/late OnUpdate obj=default/a rv=2->3\n", "nothing was buffered for it (a duplicate)", 21)
	expect(t, LateJoin, strings.Replace(join, "+1.1s inf1/late OnAdd obj=default/a rv=2 initial=true\n+1.1s inf1/late synced", "+1.1s inf1/late synced\n+1.1s inf1/late OnAdd obj=default/a rv=2 initial=true", 1),
		"latched synced with 1 initial-list add(s) not yet delivered", 13)
	expect(t, LateJoin, strings.Replace(join, "+1.1s inf1/late synced\n", "", 1), "inf1/late never latched synced", 0)
	expect(t, LateJoin, strings.Replace(join, "+2s inf1/late OnUpdate obj=default/a rv=2->3", "+2s inf1/late OnUpdate obj=default/a rv=2->4", 1), "but update default/a 2->3 was buffered for it first", 19)
}

// Goal: the tombstones oracle passes T5's relist and catches a missing, wrong or spurious
// tombstone. Method: hand-built traces.
func TestTombstonesHandBuilt(t *testing.T) {
	relist := t1 + `
+1s inf1/reflector ERROR code=410 reason=Expired
+2s inf1/reflector listed items=0 rv=5
+2s inf1/queue pop delta=ReplacedAll rv=5 n=0
+2s inf1/queue cache-replace n=0 rv=5
+2s inf1/queue buffer to=h1 call=delete obj=tomb(default/a@2)
+2s inf1/h1 OnDelete obj=default/a rv=2 tombstone=true
`
	expect(t, Tombstones, relist, "", 0)
	expect(t, Tombstones, strings.Replace(relist, "tomb(default/a@2)", "tomb(default/a@4)", 1), "but the last state the cache held was rv=2", 15)
	expect(t, Tombstones, strings.Replace(relist, "tomb(default/a@2)", "default/a@2", 1), "deleted default/a@2 without a tombstone", 15)
	noTomb := strings.Replace(relist, "+2s inf1/queue buffer to=h1 call=delete obj=tomb(default/a@2)\n+2s inf1/h1 OnDelete obj=default/a rv=2 tombstone=true\n", "+2s inf1/reflector WATCH rv=5\n", 1)
	expect(t, Tombstones, noTomb, "dropped default/a@2 from the cache without a tombstone", 15)
	spurious := strings.Replace(relist, "n=0 rv=5", "n=1 rv=5", 1)
	spurious = strings.Replace(spurious, "+2s inf1/h1 OnDelete", "+2s inf1/queue buffer to=h1 call=update obj=default/a rv=2->2 sync=true\n+2s inf1/h1 OnDelete", 1)
	expect(t, Tombstones, spurious, "tombstone for default/a, which the relist still lists", 17)
	// One relist, two tombstones for the same key.
	twice := strings.Replace(relist, "+2s inf1/h1 OnDelete obj=default/a rv=2 tombstone=true\n", "+2s inf1/queue buffer to=h1 call=delete obj=tomb(default/a@2)\n", 1)
	expect(t, Tombstones, twice, "second tombstone for default/a in one relist", 16)
	// A tombstone for a key the cache never held.
	unknown := strings.Replace(relist, "tomb(default/a@2)", "tomb(default/z@2)", 1)
	expect(t, Tombstones, unknown, "tombstone for default/z@2, but the cache held no default/z before the relist", 15)
	// The non-atomic paths delete by tombstone outside a replace: the tombstone must carry the
	// cached state.
	byTomb := t1 + `
+1s inf1/queue pop delta=Deleted obj=tomb(default/a@1)
+1s inf1/queue cache-delete obj=tomb(default/a@1)
`
	expect(t, Tombstones, byTomb, "tombstone for default/a@1, but the cache held rv=2", 12)
	expect(t, Tombstones, strings.ReplaceAll(byTomb, "tomb(default/a@1)", "tomb(default/a@2)"), "", 0)
}

// Goal: the resync oracle passes T6 (check period 10s; h1 never, h2 every 10s, h3 asking 25s and
// resyncing every 30s) and catches a wrong period, a tick off time, a wrong due set, a sync sent
// to a handler not due, and a resync of an object not cached. Method: hand-built traces.
func TestResyncAlignmentHandBuilt(t *testing.T) {
	var b strings.Builder
	b.WriteString(`
+0s inf1/h1 register requested=0s resync=0s check=10s
+0s inf1/h2 register requested=10s resync=10s check=10s
+0s inf1/h3 register requested=25s resync=25s check=10s
+0s inf1 start
+0s inf1/reflector listed items=1 rv=2
+0s inf1/queue pop delta=ReplacedAll rv=2 n=1 init=true
+0s inf1/queue cache-replace n=1 rv=2
+0s inf1/queue buffer to=h1,h2,h3 call=add obj=default/a@2 init=true
`)
	for s := 10; s <= 60; s += 10 {
		due := "h2"
		if s == 30 || s == 60 {
			due = "h2,h3"
		}
		at := "+" + strconv.Itoa(s) + "s "
		b.WriteString(at + "inf1/reflector resync-check due=" + due + "\n")
		b.WriteString(at + "inf1/queue pop delta=SyncAll\n")
		b.WriteString(at + "inf1/queue buffer to=" + due + " call=update obj=default/a rv=2->2 sync=true\n")
	}
	t6 := b.String()
	expect(t, ResyncAlignment, t6, "", 0)
	expect(t, ResyncAlignment, strings.Replace(t6, "requested=25s resync=25s", "requested=25s resync=30s", 1), "effective resync period 30s (requested 25s, check 10s), want 25s", 3)
	expect(t, ResyncAlignment, strings.Replace(t6, "+20s inf1/reflector resync-check", "+21s inf1/reflector resync-check", 1), "resync tick at +21.000s, want +20.000s", 12)
	expect(t, ResyncAlignment, strings.Replace(t6, "+20s inf1/reflector resync-check due=h2", "+20s inf1/reflector resync-check due=h2,h3", 1), "found [h2,h3] due, want [h2]", 12)
	expect(t, ResyncAlignment, strings.Replace(t6, "+20s inf1/queue buffer to=h2 ", "+20s inf1/queue buffer to=h2,h3 ", 1), "buffered for [h2,h3], but the handlers whose resync is due are [h2]", 14)
	expect(t, ResyncAlignment, strings.Replace(t6, "+20s inf1/queue buffer to=h2 call=update obj=default/a", "+20s inf1/queue buffer to=h2 call=update obj=default/b", 1), "for an object the cache does not hold", 14)
	expect(t, ResyncAlignment, strings.Replace(t6, "+20s inf1/queue buffer to=h2 call=update obj=default/a rv=2->2 sync=true\n", "", 1), "a resync gave no sync update for the cached default/a@2", 14)
	// informer.md §2.2: a pre-start registration below the check period lowers it; after start
	// the handler is raised to it instead.
	expect(t, ResyncAlignment, `
+0s inf1/h1 register requested=10s resync=10s check=10s
+0s inf1/h2 register requested=500ms resync=1s check=1s
+0s inf1 start
+1s inf1/h3 join snapshot=0 requested=0s resync=0s check=1s
+1s inf1/h4 join snapshot=0 requested=300ms resync=1s check=1s
`, "", 0)
	expect(t, ResyncAlignment, `
+0s inf1/h1 register requested=10s resync=10s check=10s
+0s inf1/h2 register requested=5s resync=5s check=10s
`, "check period 10s after the registration (requested 5s), want 5s", 2)
}

// Goal: the watch-guarantees oracle passes a correct stream and catches each broken guarantee.
// Method: hand-built records of writes and watch events, fed as the apiserver would.
func TestWatchGuaranteesHandBuilt(t *testing.T) {
	pods := world.DefaultResource()
	commit := func(rev uint64, typ watch.EventType, ns, name string) fakeapi.Commit {
		return fakeapi.Commit{Revision: rev, Type: typ, Resource: pods, Namespace: ns, Name: name}
	}
	ev := func(typ watch.EventType, key string, rv int) fakeapi.WatchEvent {
		return fakeapi.WatchEvent{WatchID: 1, Type: typ, Key: key, RV: strconv.Itoa(rv)}
	}
	bookmark := func(rv int) fakeapi.WatchEvent { return ev(watch.Bookmark, "", rv) }
	type step struct {
		commit *fakeapi.Commit
		event  *fakeapi.WatchEvent
	}
	c := func(cm fakeapi.Commit) step { return step{commit: &cm} }
	e := func(we fakeapi.WatchEvent) step { return step{event: &we} }
	run := func(startRV, sel string, steps []step) string {
		wg := newWatchGuarantees()
		for _, cm := range []fakeapi.Commit{commit(2, watch.Added, "default", "a"), commit(3, watch.Added, "other", "x")} {
			wg.Commit(cm)
		}
		if msg := wg.Opened(WatchOpened{ID: 1, Resource: pods, Namespace: "default", Options: metav1.ListOptions{ResourceVersion: startRV, LabelSelector: sel}}); msg != "" {
			return msg
		}
		for _, s := range steps {
			if s.commit != nil {
				wg.Commit(*s.commit)
			} else if msg := wg.Delivered(*s.event); msg != "" {
				return msg
			}
		}
		return ""
	}
	good := []step{
		c(commit(4, watch.Modified, "default", "a")), c(commit(5, watch.Added, "default", "b")),
		e(ev(watch.Modified, "default/a", 4)), e(ev(watch.Added, "default/b", 5)),
		c(commit(6, watch.Added, "other", "y")), e(bookmark(6)),
		c(commit(7, watch.Deleted, "default", "a")), e(ev(watch.Deleted, "default/a", 7)),
		e(fakeapi.WatchEvent{WatchID: 1, Close: fakeapi.CloseStopped}),
	}
	if msg := run("3", "", good); msg != "" {
		t.Fatalf("violation on a correct stream: %s", msg)
	}
	for _, tc := range []struct {
		name  string
		sel   string
		steps []step
		want  string
	}{
		{"out of order (selector: no gap check)", "app=web", []step{c(commit(4, watch.Modified, "default", "a")), c(commit(5, watch.Added, "default", "b")), e(ev(watch.Added, "default/b", 5)), e(ev(watch.Modified, "default/a", 4))}, "after rv=5 (out of order or duplicate)"},
		{"duplicate", "", []step{c(commit(4, watch.Modified, "default", "a")), e(ev(watch.Modified, "default/a", 4)), e(ev(watch.Modified, "default/a", 4))}, "out of order or duplicate"},
		{"gap", "", []step{c(commit(4, watch.Modified, "default", "a")), c(commit(5, watch.Added, "default", "b")), e(ev(watch.Added, "default/b", 5))}, "skips the write MODIFIED default/a@4 (a gap)"},
		{"not resumable", "", []step{e(ev(watch.Added, "default/a", 2))}, "at or before the start rv=3 (not resumable)"},
		{"bookmark ahead of what was sent", "", []step{c(commit(4, watch.Modified, "default", "a")), e(bookmark(4))}, "bookmark at rv=4 is ahead of what was sent"},
		{"bookmark goes back", "", []step{c(commit(4, watch.Modified, "default", "a")), e(ev(watch.Modified, "default/a", 4)), e(bookmark(6)), e(bookmark(5))}, "bookmark went back from rv=6 to rv=5"},
		{"bookmark behind an event", "", []step{c(commit(4, watch.Modified, "default", "a")), e(ev(watch.Modified, "default/a", 4)), e(bookmark(3))}, "bookmark at rv=3 after an event at rv=4"},
		{"event never committed", "", []step{e(ev(watch.Modified, "default/a", 9))}, "no write of default/a was committed at rv=9"},
		{"event after close", "", []step{e(fakeapi.WatchEvent{WatchID: 1, Close: fakeapi.CloseStopped}), c(commit(4, watch.Modified, "default", "a")), e(ev(watch.Modified, "default/a", 4))}, "delivered after the watch closed"},
		// A bookmark at rv=6 promises nothing at or before 6 follows (selector: no gap check
		// would catch the event at 5 instead).
		{"event after a bookmark past it", "app=web", []step{c(commit(4, watch.Modified, "default", "a")), c(commit(5, watch.Added, "default", "b")), c(commit(6, watch.Added, "other", "y")),
			e(ev(watch.Modified, "default/a", 4)), e(bookmark(6)), e(ev(watch.Added, "default/b", 5))}, "default/b@5 after a bookmark at rv=6"},
		{"initial event after the initial-events-end bookmark", "", []step{e(fakeapi.WatchEvent{WatchID: 1, Type: watch.Bookmark, RV: "3", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}),
			e(fakeapi.WatchEvent{WatchID: 1, Type: watch.Added, Key: "default/a", RV: "2", Initial: true})}, "initial ADDED default/a@2 after the initial-events-end bookmark"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run("3", tc.sel, tc.steps); !strings.Contains(got, tc.want) || tc.want == "" {
				t.Errorf("got %q, want a violation containing %q", got, tc.want)
			}
		})
	}
}

// Goal: bad names are errors, not panics.
func TestBadNames(t *testing.T) {
	if _, err := NewChecker("nope"); err == nil || !strings.HasPrefix(err.Error(), "oracle: unknown oracle") {
		t.Errorf("NewChecker(nope): %v", err)
	}
	if _, err := NewChecker(CacheBeforeNotify); err == nil {
		t.Errorf("NewChecker(%s): no error; it is the world's", CacheBeforeNotify)
	}
	if _, err := CheckTrace(nil, WatchGuarantees); err == nil {
		t.Errorf("CheckTrace(%s): no error; it reads the apiserver's record", WatchGuarantees)
	}
	if _, err := Attach(nil); err == nil {
		t.Error("Attach(nil): no error")
	}
}

// Goal: Attach refuses bad input with an error: an unknown or repeated name, a world that
// already has informers (the oracles would miss their registrations).
func TestAttachRefusesBadInput(t *testing.T) {
	w, err := world.New(1, world.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(w, "nope"); err == nil || !strings.Contains(err.Error(), `unknown oracle "nope"`) {
		t.Errorf("Attach(nope): %v", err)
	}
	if _, err := Attach(w, LateJoin, LateJoin); err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Errorf("Attach(late-join twice): %v", err)
	}
	if _, err := w.AddInformer("inf1", world.InformerSpec{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(w); err == nil || !strings.Contains(err.Error(), "already has informers") {
		t.Errorf("Attach after AddInformer: %v", err)
	}
}

// Goal: the watch oracle's memory is bounded (MaxCommits) and forgetting old writes reports
// nothing false. Method: more writes than the bound, then watches resuming from a forgotten RV
// and from a remembered one.
func TestWatchGuaranteesForgetsOldWrites(t *testing.T) {
	pods := world.DefaultResource()
	wg := newWatchGuarantees()
	last := uint64(MaxCommits + 100)
	for rev := uint64(2); rev <= last; rev++ {
		wg.Commit(fakeapi.Commit{Revision: rev, Type: watch.Modified, Resource: pods, Namespace: "default", Name: "a"})
	}
	if n := len(wg.commits[pods]); n > MaxCommits {
		t.Fatalf("%d writes remembered, bound %d", n, MaxCommits)
	}
	wg.Opened(WatchOpened{ID: 1, Resource: pods, Options: metav1.ListOptions{ResourceVersion: "1"}})
	if msg := wg.Delivered(fakeapi.WatchEvent{WatchID: 1, Type: watch.Modified, Key: "default/a", RV: "2"}); msg != "" {
		t.Errorf("a forgotten write: %s", msg)
	}
	from := strconv.FormatUint(last-2, 10)
	wg.Opened(WatchOpened{ID: 2, Resource: pods, Options: metav1.ListOptions{ResourceVersion: from}})
	if msg := wg.Delivered(fakeapi.WatchEvent{WatchID: 2, Type: watch.Modified, Key: "default/a", RV: strconv.FormatUint(last, 10)}); !strings.Contains(msg, "(a gap)") {
		t.Errorf("a gap among remembered writes: %q", msg)
	}
}

// Goal: per-object order's authority half passes states the apiserver committed and catches a
// state it never held, or one held by another object. Method: hand-built traces.
func TestPerObjectOrderAuthorityHandBuilt(t *testing.T) {
	run := `
+0s apiserver ADDED obj=pods/default/a rv=2
+0s apiserver ADDED obj=configmaps/default/b rv=3
+1s apiserver MODIFIED obj=pods/default/a rv=4
+1s apiserver DELETED obj=pods/default/a rv=5
+1s inf1/h1 OnAdd obj=default/a rv=2 initial=true
+1s inf1/h1 OnUpdate obj=default/a rv=2->4
+1s inf1/h1 OnDelete obj=default/a rv=5
+2s inf1/h1 OnDelete obj=default/a rv=4 tombstone=true
`
	expect(t, PerObjectOrder, run, "", 0)
	expect(t, PerObjectOrder, strings.Replace(run, "rv=2->4", "rv=2->6", 1), "the apiserver committed no write at rv=6", 6)
	expect(t, PerObjectOrder, strings.Replace(run, "rv=2->4", "rv=2->3", 1), "the write at rv=3 was of default/b, not default/a", 6)
}
