package fakeapi

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/informersim/informersim/internal/jsonrand"
)

// TestSpecEqual checks specEqual against DeepEqual of the objects without metadata, status,
// apiVersion and kind.
func TestSpecEqual(t *testing.T) {
	strip := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if isSpecKey(k) {
				out[k] = v
			}
		}
		return out
	}
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{"metadata", "status", "kind", "spec", "data"}
	for i := 0; i < 50000; i++ {
		a, b := map[string]any{}, map[string]any{}
		for _, k := range keys {
			if r.IntN(2) == 0 {
				a[k] = jsonrand.Random(r, 1)
			}
			if r.IntN(2) == 0 {
				b[k] = jsonrand.Random(r, 1)
			}
			if r.IntN(3) == 0 {
				b[k] = a[k]
			}
		}
		ua, ub := &unstructured.Unstructured{Object: a}, &unstructured.Unstructured{Object: b}
		if got, want := specEqual(ua, ub), reflect.DeepEqual(strip(a), strip(b)); got != want {
			t.Fatalf("specEqual(%#v, %#v) = %v, want %v", a, b, got, want)
		}
	}
}

// TestWithOwnMetaLeavesTheOriginal checks the copy-on-write helpers: changing the copy's
// top-level and metadata fields leaves the original untouched, and shareUnchanged only reuses
// equal values.
func TestWithOwnMetaLeavesTheOriginal(t *testing.T) {
	orig := cm("ns", "a", map[string]string{"x": "1"})
	orig.SetResourceVersion("5")
	before := orig.DeepCopy()
	c := withOwnMeta(orig)
	c.SetResourceVersion("6")
	c.SetName("b")
	c.Object["data"] = map[string]any{"k": "changed"}
	delete(c.Object, "kind")
	if !reflect.DeepEqual(orig.Object, before.Object) {
		t.Fatalf("original changed: %v", orig.Object)
	}
	next := before.DeepCopy()
	next.SetLabels(map[string]string{"x": "2"})
	shareUnchanged(next, orig)
	if reflect.ValueOf(next.Object["data"]).UnsafePointer() != reflect.ValueOf(orig.Object["data"]).UnsafePointer() {
		t.Fatalf("equal data not shared")
	}
	if next.GetLabels()["x"] != "2" || orig.GetLabels()["x"] != "1" {
		t.Fatalf("labels: next %v, orig %v", next.GetLabels(), orig.GetLabels())
	}
}

// scribble overwrites every map and list reachable from v, as a careless consumer might.
func scribble(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			scribble(e)
			x[k] = "scribbled"
		}
		x["extra"] = "scribbled"
	case []any:
		for i, e := range x {
			scribble(e)
			x[i] = "scribbled"
		}
	}
}

// TestConsumersNeverReachStoredObjects checks the ownership rule (package documentation,
// "Ownership of objects"): whatever a caller passes in or gets back (written objects, Get, List,
// watch events, dry runs, the deleted-during-update answer) is its own, so changing all of it
// leaves the server's state, its replayed history and later answers unchanged, although the
// server shares unchanged values between versions.
func TestConsumersNeverReachStoredObjects(t *testing.T) {
	s, _ := newTestServer(t, nil)
	pods := s.Resource(podsGVR).Namespace("ns")
	w := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	pod := func(labels map[string]string) *unstructured.Unstructured {
		u := obj("Pod", "ns", "p", labels)
		u.SetAPIVersion("v1")
		u.Object["spec"] = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}
		u.Object["status"] = map[string]any{"phase": "Pending"}
		return u
	}
	var outputs []any
	keep := func(u *unstructured.Unstructured, err error) *unstructured.Unstructured {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, u.Object)
		return u
	}
	in := pod(map[string]string{"a": "1"})
	created := keep(pods.Create(bg, in, metav1.CreateOptions{}))
	outputs = append(outputs, in.Object)
	// A label change: spec and status are shared with the previous version.
	next := created.DeepCopy()
	next.SetLabels(map[string]string{"a": "2"})
	updated := keep(pods.Update(bg, next, metav1.UpdateOptions{}))
	outputs = append(outputs, next.Object)
	// A status write (copy on write of the stored object), and a dry run of each.
	st := updated.DeepCopy()
	st.Object["status"] = map[string]any{"phase": "Running"}
	keep(pods.Update(bg, st.DeepCopy(), metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}, "status"))
	dry := updated.DeepCopy()
	dry.SetLabels(map[string]string{"a": "dry"})
	keep(pods.Update(bg, dry, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}))
	status := keep(pods.UpdateStatus(bg, st, metav1.UpdateOptions{}))
	keep(pods.Patch(bg, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"b":"x"}}}`), metav1.PatchOptions{}))
	keep(pods.Get(bg, "p", metav1.GetOptions{}))
	// A finalizer, a delete that marks the object, and the update that removes the finalizer
	// and so deletes it: the caller gets back the object it sent.
	fin := keep(pods.Get(bg, "p", metav1.GetOptions{}))
	fin = fin.DeepCopy()
	fin.SetFinalizers([]string{"example.com/f"})
	fin = keep(pods.Update(bg, fin, metav1.UpdateOptions{}))
	if err := pods.Delete(bg, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	marked := keep(pods.Get(bg, "p", metav1.GetOptions{})).DeepCopy()
	marked.SetFinalizers(nil)
	keep(pods.Update(bg, marked, metav1.UpdateOptions{}))
	l, err := s.list(podsGVR, "", metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		outputs = append(outputs, l.Items[i].Object)
	}
	for {
		ev, ok := w.Next()
		if !ok {
			break
		}
		outputs = append(outputs, ev.Object.(*unstructured.Unstructured).Object)
	}
	_ = status

	// What a fresh watch from the start replays, before and after the scribbling.
	replay := func() []map[string]any {
		rw := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "1"})
		defer rw.Stop()
		var evs []map[string]any
		for {
			ev, ok := rw.Next()
			if !ok {
				return evs
			}
			evs = append(evs, ev.Object.(*unstructured.Unstructured).Object)
		}
	}
	before := replay()
	if len(before) != 7 { // create, update, status, patch, finalizer, delete mark, DELETED
		t.Fatalf("replayed %d events, want 7", len(before))
	}
	// The history is compared as printed before the scribbling: were the replayed objects to
	// alias the stored ones, the scribbling would change both sides of a comparison of maps.
	beforeText := fmt.Sprintf("%#v", before)
	for _, o := range outputs {
		scribble(o)
	}
	if after := fmt.Sprintf("%#v", replay()); after != beforeText {
		t.Fatalf("consumers changed the server's history:\nbefore %s\nafter  %s", beforeText, after)
	}
}

// TestSetFieldKeepsContent checks setField and the metadata setters against plain map
// assignment on maps of every size around the small-map limit (a replaced key, a new key).
func TestSetFieldKeepsContent(t *testing.T) {
	for n := 0; n <= smallMapEntries+2; n++ {
		for _, k := range []string{"k0", "new"} {
			m, want := map[string]any{}, map[string]any{}
			for i := 0; i < n; i++ {
				m[fmt.Sprintf("k%d", i)] = int64(i)
				want[fmt.Sprintf("k%d", i)] = int64(i)
			}
			setField(m, k, "v")
			want[k] = "v"
			if !reflect.DeepEqual(m, want) {
				t.Fatalf("n=%d, key %s: %v, want %v", n, k, m, want)
			}
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	setMeta(u, "name", "a")
	setMetaString(u, "uid", "")
	setGeneration(u, 2)
	setFinalizers(u, []string{"f"})
	want := &unstructured.Unstructured{Object: map[string]any{}}
	want.SetName("a")
	want.SetUID("")
	want.SetGeneration(2)
	want.SetFinalizers([]string{"f"})
	if !reflect.DeepEqual(u.Object, want.Object) {
		t.Fatalf("setters: %v, want %v", u.Object, want.Object)
	}
	setGeneration(u, 0)
	setFinalizers(u, nil)
	setMetaString(u, "name", "")
	want.SetGeneration(0)
	want.SetFinalizers(nil)
	want.SetName("")
	if !reflect.DeepEqual(u.Object, want.Object) {
		t.Fatalf("removing setters: %v, want %v", u.Object, want.Object)
	}
}

// TestDeletionMarkSharesNothingWithConsumers is TestConsumersNeverReachStoredObjects for the
// delete of a kind without graceful deletion whose finalizers keep it (the deletion mark shares
// all but its top-level and metadata maps with the stored object, and delete_locked returns it
// uncopied to DeleteResult, which must copy it): scribbling over every answer and event leaves
// the replayed history unchanged.
func TestDeletionMarkSharesNothingWithConsumers(t *testing.T) {
	s, _ := newTestServer(t, nil)
	cms := s.Resource(cmGVR).Namespace("ns")
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	in := cm("ns", "a", map[string]string{"x": "1"})
	in.SetFinalizers([]string{"example.com/f"})
	var outputs []any
	created, err := cms.Create(bg, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, created.Object, in.Object)
	deleted, removed, err := cms.DeleteResult(bg, "a", metav1.DeleteOptions{})
	if err != nil || removed {
		t.Fatalf("DeleteResult: removed %v, %v", removed, err)
	}
	outputs = append(outputs, deleted.Object)
	marked, err := cms.Get(bg, "a", metav1.GetOptions{})
	if err != nil || marked.GetDeletionTimestamp() == nil {
		t.Fatalf("after delete: %v, %v", marked, err)
	}
	outputs = append(outputs, marked.Object)
	for {
		ev, ok := w.Next()
		if !ok {
			break
		}
		outputs = append(outputs, ev.Object.(*unstructured.Unstructured).Object)
	}
	replay := func() string {
		rw := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
		defer rw.Stop()
		var evs []map[string]any
		for {
			ev, ok := rw.Next()
			if !ok {
				return fmt.Sprintf("%#v", evs)
			}
			evs = append(evs, ev.Object.(*unstructured.Unstructured).Object)
		}
	}
	before := replay()
	for _, o := range outputs {
		scribble(o)
	}
	if after := replay(); after != before {
		t.Fatalf("consumers changed the server's history:\nbefore %s\nafter  %s", before, after)
	}
}

// TestRecordLogKeepsTheNewest checks recordLog against the slice it replaces (append, then drop
// the oldest max(len-limit, limit/4) records, at most all but one) for bounds around the chunk
// sizes, through several rounds of drops.
func TestRecordLogKeepsTheNewest(t *testing.T) {
	const first = recordChunk
	for _, limit := range []int{1, 2, 3, first - 1, first, first + 1, 3*first + 5, 1000} {
		var l recordLog[int]
		var want []int
		if l.all() != nil {
			t.Fatal("an empty log must list nil")
		}
		for i := 0; i < 5*limit+3*first; i++ {
			l.append(i, limit)
			want = append(want, i)
			if len(want) > limit {
				drop := min(max(len(want)-limit, limit/4), len(want)-1)
				want = append([]int(nil), want[drop:]...)
			}
			if got := l.all(); !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d, after %d appends: %v, want %v", limit, i+1, got, want)
			}
		}
	}
}

// TestNormalizeObjectIsNormalize checks normalizeObject against normalize on random objects and
// stored objects they may replace (with equal, shared and different metadata and top-level
// values, and values normalize rejects): the same content and the same errors, and every map
// or list it takes from old is equal to what it replaces.
func TestNormalizeObjectIsNormalize(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	print := func(v any) string { return fmt.Sprintf("%#v", v) }
	randomMap := func(n int) map[string]any {
		m := map[string]any{}
		for j := r.IntN(n); j > 0; j-- {
			v := jsonrand.Random(r, 1)
			if r.IntN(40) == 0 {
				v = struct{}{} // normalize rejects it
			}
			m[fmt.Sprintf("k%d", r.IntN(n))] = v
		}
		return m
	}
	for i := 0; i < 20000; i++ {
		obj := randomMap(6)
		if r.IntN(4) > 0 {
			obj["metadata"] = randomMap(10)
		}
		oldRaw := randomMap(6)
		if r.IntN(4) > 0 {
			oldRaw["metadata"] = randomMap(10)
		}
		// Some values of old equal those of obj, as in an update of an unchanged field.
		for k, v := range obj {
			if r.IntN(2) == 0 {
				oldRaw[k] = v
			}
		}
		if md, ok := obj["metadata"].(map[string]any); ok && r.IntN(2) == 0 {
			omd := map[string]any{}
			for k, v := range md {
				if r.IntN(3) > 0 {
					omd[k] = v
				}
			}
			oldRaw["metadata"] = omd
		}
		oldN, err := normalize(oldRaw, 0)
		if err != nil {
			continue // old must be a stored, normalised object
		}
		old := oldN.(map[string]any)
		want, wantErr := normalize(obj, 0)
		got, gotErr := normalizeObject(obj, old)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("errors: normalizeObject %v, normalize %v (obj %#v)", gotErr, wantErr, obj)
		}
		if wantErr == nil && print(got) != print(want) {
			t.Fatalf("normalizeObject = %s, normalize = %s", print(got), print(want))
		}
	}
}

// TestLogIndexAfter checks logIndexAfter (fast paths and binary search) against a linear scan on
// logs with gaps between revisions (burned revisions), some longer than a chunk and trimmed at
// the front, and every query around them.
func TestLogIndexAfter(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 300; i++ {
		s := &Server{}
		var revs []uint64
		rev := uint64(r.IntN(3))
		size := r.IntN(12)
		if i%3 == 0 {
			size = r.IntN(3 * logChunk)
		}
		for j := size; j > 0; j-- {
			rev += 1 + uint64(r.IntN(3))
			s.log.append(entry{rev: rev})
			revs = append(revs, rev)
		}
		if k := r.IntN(len(revs) + 1); i%2 == 0 {
			s.log.dropFront(k)
			revs = revs[k:]
		}
		for after := uint64(0); after <= rev+2; after++ {
			want := len(revs)
			for k, rv := range revs {
				if rv > after {
					want = k
					break
				}
			}
			if got := s.logIndexAfter(after); got != want {
				t.Fatalf("log %v, after %d: %d, want %d", revs, after, got, want)
			}
		}
	}
}

// TestEventLog checks eventLog against a slice through appends and front drops across chunk
// boundaries: the same entries at the same indexes, no chunk kept for dropped entries, and
// dropped entries cleared.
func TestEventLog(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var l eventLog
	var model []uint64
	next := uint64(1)
	for step := 0; step < 5000; step++ {
		if r.IntN(3) > 0 {
			for j := r.IntN(2 * logChunk); j > 0; j-- {
				l.append(entry{rev: next, obj: &unstructured.Unstructured{}})
				model = append(model, next)
				next++
			}
		} else {
			k := r.IntN(len(model) + 1)
			var dropped []*entry
			for i := 0; i < k; i++ {
				dropped = append(dropped, l.at(i))
			}
			l.dropFront(k)
			model = model[k:]
			for _, e := range dropped {
				if e.obj != nil {
					t.Fatalf("step %d: a dropped entry still references its object", step)
				}
			}
		}
		if l.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, l.len(), len(model))
		}
		for i, rv := range model {
			if got := l.at(i).rev; got != rv {
				t.Fatalf("step %d: entry %d has rev %d, want %d", step, i, got, rv)
			}
		}
		if want := (l.head + l.n + logChunk - 1) / logChunk; len(l.chunks) != want {
			t.Fatalf("step %d: %d chunks for %d entries from %d", step, len(l.chunks), l.n, l.head)
		}
	}
}

// TestCopyMeta checks copyMeta: fields take src's values (equal ones are left, different ones
// and values of other types replaced, a map in dst included), fields src lacks are removed.
func TestCopyMeta(t *testing.T) {
	src := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"uid": "u", "generation": int64(2), "creationTimestamp": "t", "deletionGracePeriodSeconds": int64(0)}}}
	dst := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"uid": "u", "generation": int64(1), "creationTimestamp": map[string]any{"x": "y"},
		"deletionTimestamp": "d", "deletionGracePeriodSeconds": "0", "name": "n"}}}
	copyMeta(dst, src, "uid", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")
	want := map[string]any{"metadata": map[string]any{
		"uid": "u", "generation": int64(2), "creationTimestamp": "t", "deletionGracePeriodSeconds": int64(0), "name": "n"}}
	if !reflect.DeepEqual(dst.Object, want) {
		t.Fatalf("copyMeta: %v, want %v", dst.Object, want)
	}
}

// TestBookmarkObjectsAreTheConsumers checks that bookmark objects, handed out without a copy, are
// each consumer's own: two watches get distinct objects, and scribbling over the first bookmarks
// changes neither the other watch's nor later ones, nor the recorded events.
func TestBookmarkObjectsAreTheConsumers(t *testing.T) {
	s, _ := newTestServer(t, nil)
	opts := metav1.ListOptions{ResourceVersion: "1", AllowWatchBookmarks: true}
	w1, w2 := mustWatch(t, s, cmGVR, "", opts), mustWatch(t, s, cmGVR, "", opts)
	take := func(w *Watcher) *unstructured.Unstructured {
		t.Helper()
		ev, ok := w.Next()
		if !ok || ev.Type != watch.Bookmark {
			t.Fatalf("watch %d: %v, %v; want a bookmark", w.ID(), ev, ok)
		}
		return ev.Object.(*unstructured.Unstructured)
	}
	s.Faults().TriggerBookmarks()
	b1, b2 := take(w1), take(w2)
	want := fmt.Sprintf("%#v", b2.Object)
	recorded := fmt.Sprintf("%#v", s.WatchEvents())
	scribble(b1.Object)
	if got := fmt.Sprintf("%#v", b2.Object); got != want {
		t.Fatalf("the other watch's bookmark changed: %s, was %s", got, want)
	}
	if got := fmt.Sprintf("%#v", s.WatchEvents()); got != recorded {
		t.Fatalf("the records changed:\n%s\nwere\n%s", got, recorded)
	}
	s.Faults().TriggerBookmarks()
	if got := fmt.Sprintf("%#v", take(w1).Object); got != want {
		t.Fatalf("a later bookmark: %s, want %s", got, want)
	}
}

// TestRequestEntryKeepsTheRecord checks that the log's compact form of a request record gives
// back the record it was made from: with every field set (each to a value of its own), with each
// single field set alone (the list options among them: a record whose only difference is one
// option must keep it), and with none. A field that requestEntry leaves out comes back zero.
func TestRequestEntryKeepsTheRecord(t *testing.T) {
	leaves := fillLeaves(reflect.New(reflect.TypeFor[RequestRecord]()).Elem(), -1, new(int))
	if leaves < 25 {
		t.Fatalf("only %d fields of a RequestRecord found", leaves)
	}
	for only := -1; only < leaves; only++ {
		var rq RequestRecord
		fillLeaves(reflect.ValueOf(&rq).Elem(), only, new(int))
		if only >= 0 && reflect.ValueOf(rq).IsZero() {
			t.Fatalf("field %d was not set", only)
		}
		e := (&recorder{}).entry(&rq)
		if got := e.record(); !reflect.DeepEqual(got, rq) {
			t.Fatalf("field %d: the entry gives back\n%+v\nwant\n%+v", only, got, rq)
		}
	}
	var rq RequestRecord
	if e := (&recorder{}).entry(&rq); e.options != nil || e.outcome != nil || !reflect.DeepEqual(e.record(), rq) {
		t.Fatalf("a record without options and outcome kept %v, %v", e.options, e.outcome)
	}
	// The records of one resource share it; past maxSharedResources resources, each record
	// has its own, and the recorder's table stops growing.
	var r recorder
	for i := range maxSharedResources + 5 {
		rq := RequestRecord{Resource: schema.GroupVersionResource{Version: "v1", Resource: fmt.Sprintf("r%d", i)}}
		a, b := r.entry(&rq), r.entry(&rq)
		if shared := a.resource == b.resource; shared != (i < maxSharedResources) || a.record().Resource != rq.Resource {
			t.Fatalf("resource %d: shared %v, gives back %v", i, shared, a.record().Resource)
		}
	}
	if len(r.resources) != maxSharedResources {
		t.Fatalf("the recorder shares %d resources, want %d", len(r.resources), maxSharedResources)
	}
}

// fillLeaves sets v's leaf fields (strings, numbers, booleans, times; through structs and
// pointers) to values of their own: the one numbered only, or all of them when only is -1. It
// returns the number of leaves it went through.
func fillLeaves(v reflect.Value, only int, n *int) int {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			break
		}
		for i := range v.NumField() {
			fillLeaves(v.Field(i), only, n)
		}
		return *n
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		before := *n
		fillLeaves(p.Elem(), only, n)
		if only < 0 || (only >= before && only < *n) {
			v.Set(p)
		}
		return *n
	}
	k := *n
	*n++
	if only >= 0 && only != k {
		return *n
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("value%d", k))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(k + 1))
	case reflect.Uint64:
		v.SetUint(uint64(k + 1))
	case reflect.Struct: // a time
		v.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, k, 0, time.UTC)))
	default:
		panic(fmt.Sprintf("fillLeaves: a %s field", v.Type()))
	}
	return *n
}
