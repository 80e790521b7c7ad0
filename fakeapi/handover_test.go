package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/informersim/informersim/internal/jsonrand"
)

// oddValue draws a value as callers hand them in: jsonrand's (typed nil maps and lists, an
// int32, NaN), and forms normalize converts (an int, a uint8, a json.Number, a map[string]string,
// a []string) or rejects (bad, when set: its own message only, so that an object with several
// bad values gives one message whatever the order of the walk).
func oddValue(r *rand.Rand, depth int, bad any) any {
	switch r.IntN(14) {
	case 0:
		return 7
	case 1:
		return uint8(3)
	case 2:
		return json.Number([]string{"12", "1.5"}[r.IntN(2)])
	case 3:
		return map[string]string{"a": "b"}
	case 4:
		return []string{"a"}
	case 5:
		if bad != nil {
			return bad
		}
	case 6, 7:
		if depth < 4 {
			m := map[string]any{}
			for i := r.IntN(3); i > 0; i-- {
				m[fmt.Sprintf("k%d", r.IntN(3))] = oddValue(r, depth+1, bad)
			}
			return m
		}
	case 8:
		if depth < 4 {
			return []any{oddValue(r, depth+1, bad), oddValue(r, depth+1, bad)}
		}
	}
	return jsonrand.Random(r, depth)
}

// nested returns n maps, each holding the next at "n".
func nested(n int) map[string]any {
	m := map[string]any{}
	for range n {
		m = map[string]any{"n": m}
	}
	return m
}

// TestAdoptObjectIsNormalizeObject checks adoptObject against normalizeObject on random objects
// handed over (with values to convert, nil maps and lists, values normalize rejects, nesting
// past its limit) and stored objects they may replace: the same content and the same errors,
// the same values shared with old (a top-level or metadata value is old's in one exactly when it
// is in the other), the result obj itself, and its metadata never old's.
func TestAdoptObjectIsNormalizeObject(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	print := func(v any) string { return fmt.Sprintf("%#v", v) }
	errs, sharing := 0, 0
	for i := range 20000 {
		obj, old, ok := randomHandover(r)
		if !ok {
			continue
		}
		oldText := print(old)
		want, wantErr := normalizeObject(obj, old)
		got, gotErr := adoptObject(obj, old)
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("case %d: errors: adoptObject %v, normalizeObject %v", i, gotErr, wantErr)
		}
		if print(old) != oldText {
			t.Fatalf("case %d: adoptObject changed old", i)
		}
		if wantErr != nil {
			errs++
			continue
		}
		if print(got) != print(want) {
			t.Fatalf("case %d: adoptObject = %s,\nnormalizeObject = %s", i, print(got), print(want))
		}
		if !sameComposite(got, obj) {
			t.Fatalf("case %d: adoptObject did not return obj itself", i)
		}
		sharing += checkAdoptedSharing(t, i, old, got, want)
	}
	t.Logf("%d of 20000 objects rejected, %d top-level values shared with old", errs, sharing)
	if errs < 1000 || sharing < 1000 {
		t.Fatalf("%d of 20000 objects rejected, %d top-level values shared with old: both must be seen often", errs, sharing)
	}
}

// randomHandover draws an object a caller hands over (with values to convert, nil maps and lists,
// values normalize rejects, nesting past its limit) and, most of the time, a stored object it
// replaces, some of whose values obj shares or equals, as in an update. ok is false when the
// drawn old cannot be stored (normalize rejects it): the case is skipped.
func randomHandover(r *rand.Rand) (map[string]any, map[string]any, bool) {
	var bad any
	switch r.IntN(8) {
	case 0:
		bad = struct{}{}
	case 1:
		bad = uint64(1 << 63)
	case 2:
		bad = nested(70)
	}
	randomMap := func(n int, bad any) map[string]any {
		m := map[string]any{}
		for j := r.IntN(n); j > 0; j-- {
			m[fmt.Sprintf("k%d", r.IntN(n))] = oddValue(r, 1, bad)
		}
		return m
	}
	obj := randomMap(6, bad)
	switch r.IntN(8) {
	case 0:
	case 1:
		obj["metadata"] = map[string]any(nil)
	default:
		obj["metadata"] = randomMap(10, bad)
	}
	oldRaw := randomMap(6, nil)
	if r.IntN(4) > 0 {
		oldRaw["metadata"] = randomMap(10, nil)
	}
	for k, v := range obj { // some values of old equal obj's, as in an update
		if r.IntN(2) == 0 {
			oldRaw[k] = copyComposites(v)
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok && md != nil && r.IntN(2) == 0 {
		omd := map[string]any{}
		for k, v := range md {
			if r.IntN(3) > 0 {
				omd[k] = copyComposites(v)
			}
		}
		oldRaw["metadata"] = omd
	}
	var old map[string]any
	if r.IntN(5) > 0 {
		oldN, err := normalize(oldRaw, 0)
		if err != nil {
			return nil, nil, false // old must be a stored, normalised object
		}
		old = oldN.(map[string]any)
		if omd, ok := old["metadata"].(map[string]any); ok && r.IntN(6) == 0 {
			obj["metadata"] = omd // a caller handing over the stored metadata itself
		}
		for k, v := range old { // or the stored values themselves
			if k != "metadata" && isComposite(v) && r.IntN(6) == 0 {
				obj[k] = v
			}
		}
	}
	return obj, old, true
}

// checkAdoptedSharing checks that adoptObject's result got shares a value with old exactly where
// normalizeObject's want does (at the top level and in metadata) and never holds old's metadata
// map. It returns how many top-level values want shares with old.
func checkAdoptedSharing(t *testing.T, i int, old, got, want map[string]any) (sharing int) {
	t.Helper()
	shared := func(m, o map[string]any, k string) bool { return sameComposite(m[k], o[k]) }
	for k := range want {
		if shared(want, old, k) {
			sharing++
		}
		if shared(got, old, k) != shared(want, old, k) {
			t.Fatalf("case %d: %q shared with old: adoptObject %v, normalizeObject %v", i, k, shared(got, old, k), shared(want, old, k))
		}
	}
	gmd, _ := got["metadata"].(map[string]any)
	wmd, _ := want["metadata"].(map[string]any)
	omd, _ := old["metadata"].(map[string]any)
	if sameComposite(gmd, omd) {
		t.Fatalf("case %d: the adopted metadata is old's", i)
	}
	for k := range wmd {
		if shared(gmd, omd, k) != shared(wmd, omd, k) {
			t.Fatalf("case %d: metadata %q shared with old: adoptObject %v, normalizeObject %v", i, k, shared(gmd, omd, k), shared(wmd, omd, k))
		}
	}
	return sharing
}

// handedOverWrites makes the same writes on a server, handing the objects over when handOver is
// set and copying them otherwise, with objects in the odd forms callers use (an int, a
// map[string]string, a nil list), and returns the history a watch from the start replays and the
// final object.
func handedOverWrites(t *testing.T, handOver bool) (history []map[string]any, final *unstructured.Unstructured, s *Server, handed []*unstructured.Unstructured) {
	t.Helper()
	s, _ = newTestServer(t, nil)
	rc := s.Resource(cmGVR).Namespace("ns")
	newCM := func(v any) *unstructured.Unstructured {
		u := cm("ns", "a", nil)
		u.Object["data"] = map[string]any{"k": v}
		u.Object["binaryData"] = map[string]any(nil)
		u.Object["extra"] = []any{7, map[string]string{"x": "y"}, []any(nil)}
		md := u.Object["metadata"].(map[string]any)
		md["labels"] = map[string]string{"app": "x"}
		md["finalizers"] = []string{"example.com/f"}
		handed = append(handed, u)
		return u
	}
	const lender = "the test"
	var err error
	if handOver {
		_, err = rc.CreateHandedOver(bg, newCM("1"), metav1.CreateOptions{}, lender)
	} else {
		_, err = rc.CreateLent(bg, newCM("1"), metav1.CreateOptions{}, lender)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2", "2", "3"} { // the second is a no-op
		_, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: lender, HandOver: handOver, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			u := newCM(v)
			u.SetResourceVersion(live.GetResourceVersion())
			u.Object["extra"] = live.Object["extra"] // a stored value, shared
			return u, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rc.Patch(bg, "a", types.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	defer w.Stop()
	for {
		ev, ok := w.Next()
		if !ok {
			break
		}
		history = append(history, ev.Object.(*unstructured.Unstructured).Object)
	}
	final, err = rc.Get(bg, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatalf("handOver %v: Lending.Check = %v", handOver, err)
	}
	return history, final, s, handed
}

// TestHandedOverWritesStoreWhatCopiesStore checks that objects handed over (CreateHandedOver,
// Mutation.HandOver) are stored as copying writes store them, events and all, in the odd forms
// callers hand in, and that they were adopted, not copied: the stored version holds the handed
// object's own maps.
func TestHandedOverWritesStoreWhatCopiesStore(t *testing.T) {
	wantHistory, wantFinal, _, _ := handedOverWrites(t, false)
	gotHistory, gotFinal, s, handed := handedOverWrites(t, true)
	if len(wantHistory) != 4 { // create, two updates, the patch
		t.Fatalf("%d events, want 4", len(wantHistory))
	}
	if !reflect.DeepEqual(gotHistory, wantHistory) || !reflect.DeepEqual(gotFinal, wantFinal) {
		t.Fatalf("handed over:\n%v\n%v\ncopied:\n%v\n%v", gotHistory, gotFinal, wantHistory, wantFinal)
	}
	// The last update's object (handed[3]; handed[2], a no-op, was not stored) is the version
	// the patch replaced: its data map must be the one handed over.
	res, _ := s.lookup_locked(cmGVR)
	h := res.keys[objKey{"ns", "a"}]
	var v3 *unstructured.Unstructured
	for _, v := range h.versions {
		if v.obj != nil && v.obj.GetResourceVersion() == gotHistory[2]["metadata"].(map[string]any)["resourceVersion"] {
			v3 = v.obj
		}
	}
	if v3 == nil || len(h.versions) != 4 {
		t.Fatalf("the last update's version is not kept: %v", h.versions)
	}
	if !sameComposite(v3.Object["data"], handed[3].Object["data"]) {
		t.Error("the handed-over object's data was copied, not adopted")
	}
}

// TestCallersKeepWhatTheyPassIn checks that every write that is not handed over copies what its
// caller passes in: the caller changing all of it afterwards (Create, CreateLent, CreateRV,
// Update, UpdateRV, UpdateStatus, and the objects a Mutation's Compute returns and keeps, lent
// or not, updating or creating) leaves the server's history and objects as they were.
func TestCallersKeepWhatTheyPassIn(t *testing.T) {
	s, _ := newTestServer(t, nil)
	pods := s.Resource(podsGVR).Namespace("ns")
	var kept []any
	pod := func(name string, labels map[string]string) *unstructured.Unstructured {
		u := obj("Pod", "ns", name, labels)
		u.SetAPIVersion("v1")
		u.Object["spec"] = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}
		u.Object["status"] = map[string]any{"phase": "Pending"}
		kept = append(kept, u.Object)
		return u
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := pods.Create(bg, pod("a", map[string]string{"v": "1"}), metav1.CreateOptions{})
	must(err)
	_, err = pods.CreateLent(bg, pod("b", map[string]string{"v": "1"}), metav1.CreateOptions{}, "the test")
	must(err)
	_, _, err = pods.CreateRV(bg, pod("c", map[string]string{"v": "1"}), metav1.CreateOptions{})
	must(err)
	for _, name := range []string{"a", "b", "c"} {
		cur, err := pods.Get(bg, name, metav1.GetOptions{})
		must(err)
		next := pod(name, map[string]string{"v": "2"})
		next.SetResourceVersion(cur.GetResourceVersion())
		switch name {
		case "a":
			_, err = pods.Update(bg, next, metav1.UpdateOptions{})
		case "b":
			_, err = pods.UpdateRV(bg, next, metav1.UpdateOptions{})
		case "c":
			next.Object["status"] = map[string]any{"phase": "Running"}
			_, err = pods.UpdateStatus(bg, next, metav1.UpdateOptions{})
		}
		must(err)
	}
	for i, lendTo := range []string{"", "the test"} {
		_, _, err = pods.Mutate(bg, "a", Mutation{Verb: VerbPatch, LendTo: lendTo, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return pod("a", map[string]string{"v": fmt.Sprint(3 + i)}), nil
		}})
		must(err)
	}
	_, _, err = pods.Mutate(bg, "d", Mutation{Verb: VerbPatch, Create: true, Compute: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return pod("d", nil), nil
	}})
	must(err)

	state := func() string {
		w := mustWatch(t, s, podsGVR, "", metav1.ListOptions{ResourceVersion: "1"})
		defer w.Stop()
		var evs []any
		for {
			ev, ok := w.Next()
			if !ok {
				break
			}
			evs = append(evs, ev.Object.(*unstructured.Unstructured).Object)
		}
		l, err := pods.List(bg, metav1.ListOptions{})
		must(err)
		return fmt.Sprintf("%#v\n%#v", evs, l.Items)
	}
	before := state()
	if len(kept) != 9 {
		t.Fatalf("%d objects passed in, want 9", len(kept))
	}
	for _, o := range kept {
		scribble(o)
	}
	if after := state(); after != before {
		t.Fatalf("callers changed the server's state through what they passed in:\nbefore %s\nafter  %s", before, after)
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatalf("Lending.Check = %v", err)
	}
}

// TestHandOverOfTheStoredMetadata checks that a Mutation handing over an object whose metadata
// map is the stored object's own (a new top-level map around live's values) leaves the stored
// version as it was: the write sets its resourceVersion in a metadata map of its own.
func TestHandOverOfTheStoredMetadata(t *testing.T) {
	s, _ := newTestServer(t, nil)
	rc := s.Resource(cmGVR).Namespace("ns")
	mustCreate(t, s, cmGVR, cm("ns", "a", nil))
	before, err := rc.Get(bg, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := rc.Mutate(bg, "a", Mutation{Verb: VerbUpdate, LendTo: "the test", HandOver: true, Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		top := map[string]any{}
		for k, v := range live.Object {
			top[k] = v
		}
		top["data"] = map[string]any{"k": "new"}
		return &unstructured.Unstructured{Object: top}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.GetResourceVersion() == before.GetResourceVersion() {
		t.Fatalf("the write was not committed: %v", out.Object)
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatalf("the stored version was changed: %v", err)
	}
	w := mustWatch(t, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"})
	defer w.Stop()
	ev, ok := w.Next()
	if !ok || !reflect.DeepEqual(runtime.DeepCopyJSON(ev.Object.(*unstructured.Unstructured).Object), before.Object) {
		t.Fatalf("the first version now reads %v, want %v", ev.Object, before.Object)
	}
}

// TestHandedOverChangedLaterIsReported checks the safety net of a hand-over: a caller that
// breaks its promise and changes what it handed over changes the committed version, which
// CreateHandedOver's answer lends to it, so the lending check reports the change.
func TestHandedOverChangedLaterIsReported(t *testing.T) {
	s, _ := newTestServer(t, nil)
	u := cm("ns", "a", nil)
	if _, err := s.Resource(cmGVR).Namespace("ns").CreateHandedOver(bg, u, metav1.CreateOptions{}, "the test"); err != nil {
		t.Fatal(err)
	}
	if err := s.Lending().Check(); err != nil {
		t.Fatalf("nothing changed yet: %v", err)
	}
	u.Object["data"].(map[string]any)["k"] = "changed later"
	var me *MutationError
	if err := s.Lending().Check(); !errors.As(err, &me) || me.LentTo != "the test" {
		t.Fatalf("Lending.Check = %v, want a MutationError naming the test", err)
	}
}

// copyComposites copies the maps and lists of v, as they nest, and keeps every other value as
// it is (DeepCopyJSONValue would panic on the odd types these tests hand in).
func copyComposites(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = copyComposites(e)
		}
		return c
	case []any:
		if x == nil {
			return x
		}
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = copyComposites(e)
		}
		return c
	}
	return v
}
