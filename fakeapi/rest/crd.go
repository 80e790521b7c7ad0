package rest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// CustomResourceDefinitions (apiextensions.k8s.io/v1) are stored by the fake apiserver as any
// other object; the front serves what they define, doing what kube-apiserver's apiextensions
// controllers do, in the same order, as writes of the server's own:
//   - naming: a definition's names are accepted unless another definition of its group has
//     accepted them already (status.acceptedNames, the NamesAccepted condition, with the
//     naming controller's reasons: PluralConflict, SingularConflict, ShortNamesConflict,
//     KindConflict, ListKindConflict);
//   - establishing: a definition whose names are accepted is Established, and from then on its
//     resource is served (discovery included) with its scope, names, status and scale
//     subresources;
//   - finalizing: deleting a definition marks it (deletionTimestamp, the
//     customresourcecleanup.apiextensions.k8s.io finalizer, which fakeapi adds), then its objects
//     are deleted, then, once none is left, the resource stops being served and the finalizer is
//     removed, which ends the definition.
//
// kube-apiserver runs these controllers on its own goroutines, a few milliseconds after the
// write. The front has none: it brings the served table up to date at the start of the next
// request it serves (syncDefinitions), whichever client wrote the definition, so a client that
// created a definition finds it established and served on its next request, as envtest's
// installer and `kubectl apply` expect.
//
// Every served version is served: the storage version is the fakeapi resource that holds the
// objects, each other version a view of it (resource.store) whose objects differ only by their
// apiVersion, as with a definition's conversion strategy None. Simplification: the status
// conditions are written in one write where the naming and establishing controllers write two.

// definedResource is what the front knows of a resource a CustomResourceDefinition defines.
type definedResource struct {
	// crd is the definition as the table was built from it, read-only (it is the server's copy,
	// handed to Admission and the seam's other parts as Write.Definition).
	crd         *unstructured.Unstructured
	singular    string
	terminating bool
	version     string
	// views are the definition's other served versions, served from the storage version's
	// objects.
	views []fakeapi.Resource
}

// crdState is the front's part of the definitions' lifecycle.
type crdState struct {
	// pending counts the commits that may change the table (a definition written, an object
	// deleted while a definition waits for it, a sync's own failed write to try again); synced
	// is the count the table reflects. A request that finds synced behind pending syncs, or
	// waits on mu for the sync in progress, so it never reads a table older than a write it
	// follows.
	pending, synced atomic.Uint64
	// awaiting says a definition being deleted waits for objects that finalizers of their own
	// keep: the deletion of any object marks the table stale too, so the wait ends with it.
	awaiting atomic.Bool
	// mu serialises syncs; served, under it, maps each resource served for a definition to
	// what it was built from.
	mu     sync.Mutex
	served map[schema.GroupVersionResource]*definedResource
}

// maxDefinitionSyncRounds bounds the rounds of one sync: each round's own status writes mark the
// definitions written again, and the round after them finds nothing to do.
const maxDefinitionSyncRounds = 4

// Conditions of a CustomResourceDefinition and their reasons, as kube-apiserver writes them.
const (
	condNamesAccepted = "NamesAccepted"
	condEstablished   = "Established"
	condTerminating   = "Terminating"
)

// watchDefinitions makes every committed write of a definition, from any client of the server,
// mark the table stale. The server may hold definitions already: the first request syncs.
func (h *Handler) watchDefinitions() {
	h.crds.pending.Store(1)
	h.srv.OnCommit(func(c fakeapi.Commit) {
		if c.Resource == fakeapi.CustomResourceDefinitionsGVR || (c.Type == watch.Deleted && h.crds.awaiting.Load()) {
			h.crds.pending.Add(1)
		}
	})
}

// syncDefinitions brings the served table up to date with the definitions, if any was written
// since it was built. It writes as the apiextensions controllers write, to the server directly
// (not through the front: no Admission, no managedFields): status updates of definitions,
// deletes of the objects of one being deleted, the removal of its finalizer. They are fakeapi
// writes like any other, so a failure injected for that verb and resource (Faults.FailNext)
// fails them; a failed write is tried again at the next sync.
func (h *Handler) syncDefinitions() {
	if h.crds.synced.Load() >= h.crds.pending.Load() {
		return
	}
	h.crds.mu.Lock()
	defer h.crds.mu.Unlock()
	for i := 0; i < maxDefinitionSyncRounds; i++ {
		target := h.crds.pending.Load()
		if h.crds.synced.Load() >= target {
			return
		}
		h.syncDefinitionsOnce_locked()
		h.crds.synced.Store(target)
	}
}

// syncDefinitionsOnce_locked is one round: names and conditions of every definition, the
// finalizer of those being deleted, then the table.
func (h *Handler) syncDefinitionsOnce_locked() {
	ctx := context.Background()
	crds, err := h.srv.Snapshot(fakeapi.CustomResourceDefinitionsGVR, "", metav1.ListOptions{})
	if err != nil {
		return // only a selector can fail a snapshot, and there is none
	}
	if h.crds.served == nil {
		h.crds.served = map[schema.GroupVersionResource]*definedResource{}
	}
	defined := map[schema.GroupVersionResource]*definedResource{}
	var resources []fakeapi.Resource
	awaiting := false
	for i := range crds.Items {
		crd := &crds.Items[i]
		if crd.GetDeletionTimestamp() == nil {
			if changed := h.nameDefinition(ctx, crd, crds.Items); changed {
				continue // its status write marked the table stale: the next round serves it
			}
		} else if done := h.finalizeDefinition(ctx, crd); done {
			continue
		} else {
			awaiting = true
		}
		r, d, ok := servedResource(crd)
		if !ok {
			continue
		}
		defined[r.GVR] = d
		resources = append(resources, r)
	}
	// Stop serving what no definition serves any more (its objects were deleted by the
	// finalizer), then serve or update the rest, in name order.
	gone := make([]schema.GroupVersionResource, 0, len(h.crds.served))
	for gvr := range h.crds.served {
		if defined[gvr] == nil {
			gone = append(gone, gvr)
		}
	}
	slices.SortFunc(gone, func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) })
	for _, gvr := range gone {
		if err := h.srv.RemoveResource(gvr); err == nil || !strings.Contains(err.Error(), "still holds") {
			delete(h.crds.served, gvr)
		}
	}
	for _, r := range resources {
		var err error
		if h.crds.served[r.GVR] != nil {
			err = h.srv.UpdateResource(r)
		} else {
			err = h.srv.AddResource(r)
		}
		if err != nil {
			delete(defined, r.GVR) // a clash with a resource of the configuration: not served
			continue
		}
		h.crds.served[r.GVR] = defined[r.GVR]
	}
	h.crds.awaiting.Store(awaiting)
	h.tab.Store(newTable(h.srv.Config().Resources, h.crds.served))
}

// nameDefinition does what the naming and establishing controllers do for crd: accept its names
// unless another definition of the group holds them, and set the NamesAccepted and Established
// conditions. It reports whether it wrote the definition's status.
func (h *Handler) nameDefinition(ctx context.Context, crd *unstructured.Unstructured, all []unstructured.Unstructured) bool {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	requested, _, _ := unstructured.NestedMap(crd.Object, "spec", "names")
	accepted, _, _ := unstructured.NestedMap(crd.Object, "status", "acceptedNames")
	if accepted == nil {
		accepted = map[string]any{}
	}
	// The names other definitions of the group accepted.
	resources, kinds := map[string]bool{}, map[string]bool{}
	for i := range all {
		other := &all[i]
		if other.GetName() == crd.GetName() {
			continue
		}
		if g, _, _ := unstructured.NestedString(other.Object, "spec", "group"); g != group {
			continue
		}
		names, _, _ := unstructured.NestedMap(other.Object, "status", "acceptedNames")
		for _, k := range []string{"plural", "singular"} {
			if s, _ := names[k].(string); s != "" {
				resources[s] = true
			}
		}
		for _, s := range stringsOf(names["shortNames"]) {
			resources[s] = true
		}
		for _, k := range []string{"kind", "listKind"} {
			if s, _ := names[k].(string); s != "" {
				kinds[s] = true
			}
		}
	}
	next := map[string]any{}
	for k, v := range accepted {
		next[k] = v
	}
	status, reason, message := "True", "NoConflicts", "no conflicts found"
	conflict := func(r, m string) { status, reason, message = "False", r, m }
	take := func(key string, used map[string]bool, why string) {
		want, _ := requested[key].(string)
		have, _ := accepted[key].(string)
		if want != have && used[want] {
			conflict(why, fmt.Sprintf("%q is already in use", want))
			return
		}
		if want == "" {
			delete(next, key)
			return
		}
		next[key] = want
	}
	take("plural", resources, "PluralConflict")
	take("singular", resources, "SingularConflict")
	if want, have := stringsOf(requested["shortNames"]), stringsOf(accepted["shortNames"]); !slices.Equal(want, have) {
		var msgs []string
		for _, s := range want {
			if !slices.Contains(have, s) && resources[s] {
				msgs = append(msgs, fmt.Sprintf("%q is already in use", s))
			}
		}
		switch {
		case len(msgs) == 1:
			conflict("ShortNamesConflict", msgs[0])
		case len(msgs) > 1:
			conflict("ShortNamesConflict", "["+strings.Join(msgs, ", ")+"]")
		case len(want) == 0:
			delete(next, "shortNames")
		default:
			next["shortNames"] = anyStrings(want)
		}
	}
	take("kind", kinds, "KindConflict")
	take("listKind", kinds, "ListKindConflict")
	if c := stringsOf(requested["categories"]); len(c) > 0 {
		next["categories"] = anyStrings(c)
	} else {
		delete(next, "categories")
	}

	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	now := h.now().UTC().Format(time.RFC3339)
	newConds := setCondition(conds, condNamesAccepted, status, reason, message, now)
	if status == "True" {
		if c := findCondition(newConds, condEstablished); c == nil || c["status"] != "True" {
			newConds = setCondition(newConds, condEstablished, "True", "InitialNamesAccepted", "the initial names have been accepted", now)
		}
	} else if findCondition(newConds, condEstablished) == nil {
		newConds = setCondition(newConds, condEstablished, "False", "NotAccepted", "not all names are accepted", now)
	}
	if equalJSON(next, accepted) && equalJSON(anySlice(newConds), anySlice(conds)) {
		return false
	}
	return h.writeDefinitionStatus(ctx, crd, func(st map[string]any) {
		st["acceptedNames"] = next
		st["conditions"] = anySlice(newConds)
	})
}

// finalizeDefinition does what the finalizer controller does for crd, which is being deleted:
// mark it Terminating, delete its objects, and once none is left stop serving its resource and
// remove the finalizer. It reports whether the resource is no longer to be served.
func (h *Handler) finalizeDefinition(ctx context.Context, crd *unstructured.Unstructured) bool {
	if !slices.Contains(crd.GetFinalizers(), fakeapi.CustomResourceCleanupFinalizer) {
		return true // other finalizers hold it: its resource is gone already
	}
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	if c := findCondition(conds, condTerminating); c == nil || c["reason"] != "InstanceDeletionInProgress" {
		now := h.now().UTC().Format(time.RFC3339)
		newConds := setCondition(conds, condTerminating, "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", now)
		if h.writeDefinitionStatus(ctx, crd, func(st map[string]any) { st["conditions"] = anySlice(newConds) }) {
			return false // the next round deletes, on the definition as written
		}
	}
	r, _, ok := servedResource(crd)
	if ok && h.crds.served[r.GVR] != nil {
		objs, err := h.srv.Snapshot(r.GVR, "", metav1.ListOptions{})
		if err == nil {
			left := 0
			for i := range objs.Items {
				o := &objs.Items[i]
				rc := h.srv.Resource(r.GVR).Namespace(o.GetNamespace())
				if o.GetDeletionTimestamp() == nil {
					if err := rc.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						h.crds.pending.Add(1) // an injected failure: try again
						left++
						continue
					}
				}
				if _, err := rc.Get(ctx, o.GetName(), metav1.GetOptions{}); err == nil {
					left++ // finalizers of its own keep it
				}
			}
			if left > 0 {
				return false // still served, for the finalizers to be removed
			}
		}
		if err := h.srv.RemoveResource(r.GVR); err != nil {
			return false
		}
		delete(h.crds.served, r.GVR)
	}
	rc := h.srv.Resource(fakeapi.CustomResourceDefinitionsGVR)
	next := crd.DeepCopy()
	next.SetFinalizers(slices.DeleteFunc(next.GetFinalizers(), func(f string) bool { return f == fakeapi.CustomResourceCleanupFinalizer }))
	if _, err := rc.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		h.crds.pending.Add(1) // a conflict or an injected failure: try again
	}
	return true
}

// writeDefinitionStatus writes crd's status as change makes it, reporting whether it did.
func (h *Handler) writeDefinitionStatus(ctx context.Context, crd *unstructured.Unstructured, change func(status map[string]any)) bool {
	next := crd.DeepCopy()
	st, _, _ := unstructured.NestedMap(next.Object, "status")
	if st == nil {
		st = map[string]any{}
	}
	change(st)
	next.Object["status"] = st
	_, err := h.srv.Resource(fakeapi.CustomResourceDefinitionsGVR).Update(ctx, next, metav1.UpdateOptions{}, "status")
	if err != nil {
		h.crds.pending.Add(1) // a conflict or an injected failure: try again
	}
	return err == nil
}

// servedResource is the resource crd defines, when it is to be served: its names accepted,
// Established, a storage version named. The description has the definition's scope, its
// storage version's status and scale subresources; generation is tracked and updates need a
// resourceVersion, as for every custom resource.
func servedResource(crd *unstructured.Unstructured) (fakeapi.Resource, *definedResource, bool) {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	if c := findCondition(conds, condEstablished); c == nil || c["status"] != "True" {
		return fakeapi.Resource{}, nil, false
	}
	names, _, _ := unstructured.NestedMap(crd.Object, "status", "acceptedNames")
	return describeDefinition(crd, names)
}

// DefinedResource is the resource a CustomResourceDefinition defines, as a fakeapi.Resource of
// its storage version (scope, status and scale subresources, short names and categories,
// generation tracked, updates requiring a resourceVersion), for a server that takes custom
// resources from CRD manifests without a REST front: fakeapi.Config.Resources, a simulated
// world's. It reads spec.names (a front serves the names accepted, which are the same unless
// another definition holds them). Served through a front, the definition itself is what to
// write (kube.InstallDefinitions), which also serves its other versions and admits objects by
// its schema.
func DefinedResource(crd *unstructured.Unstructured) (fakeapi.Resource, error) {
	if crd == nil || crd.GroupVersionKind() != definitionGVK {
		return fakeapi.Resource{}, errors.New("rest: DefinedResource: not an apiextensions.k8s.io/v1 CustomResourceDefinition")
	}
	names, _, _ := unstructured.NestedMap(crd.Object, "spec", "names")
	r, _, ok := describeDefinition(crd, names)
	if !ok {
		return fakeapi.Resource{}, fmt.Errorf("rest: DefinedResource: definition %q lacks a group, a plural, a kind or a storage version", crd.GetName())
	}
	return r, nil
}

// describeDefinition describes what crd defines under names (its spec's or its accepted ones).
func describeDefinition(crd *unstructured.Unstructured, names map[string]any) (fakeapi.Resource, *definedResource, bool) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	plural, _ := names["plural"].(string)
	kind, _ := names["kind"].(string)
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var storage map[string]any
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["storage"] == true {
			storage = m
		}
	}
	version, _ := storage["name"].(string)
	if group == "" || plural == "" || kind == "" || version == "" {
		return fakeapi.Resource{}, nil, false
	}
	// of is the description of one version, with that version's subresources.
	of := func(m map[string]any) fakeapi.Resource {
		name, _ := m["name"].(string)
		r := fakeapi.Resource{
			GVR:                    schema.GroupVersionResource{Group: group, Version: name, Resource: plural},
			Kind:                   kind,
			Namespaced:             scope != "Cluster",
			Generation:             true,
			RequireResourceVersion: true,
		}
		subs, _ := m["subresources"].(map[string]any)
		if _, ok := subs["status"].(map[string]any); ok {
			r.Status = true
		}
		r.ShortNames, r.Categories = stringsOf(names["shortNames"]), stringsOf(names["categories"])
		if sc, ok := subs["scale"].(map[string]any); ok {
			spec, _ := sc["specReplicasPath"].(string)
			status, _ := sc["statusReplicasPath"].(string)
			sel, _ := sc["labelSelectorPath"].(string)
			r.Scale = &fakeapi.ScaleSubresource{SpecReplicasPath: spec, StatusReplicasPath: status, LabelSelectorPath: sel}
		}
		return r
	}
	r := of(storage)
	var views []fakeapi.Resource
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if name, _ := m["name"].(string); ok && m["served"] == true && name != "" && name != version {
			views = append(views, of(m))
		}
	}
	singular, _ := names["singular"].(string)
	if singular == "" {
		singular = strings.ToLower(kind)
	}
	d := &definedResource{
		crd:         crd,
		singular:    singular,
		terminating: crd.GetDeletionTimestamp() != nil,
		version:     version,
		views:       views,
	}
	return r, d, true
}

// findCondition returns the condition of type typ in conds, or nil.
func findCondition(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// setCondition returns conds with the condition typ set as the apiextensions helpers set it: in
// place if present (its lastTransitionTime kept unless the status changes), appended otherwise.
// conds is not changed.
func setCondition(conds []any, typ, status, reason, message, now string) []any {
	out := make([]any, 0, len(conds)+1)
	found := false
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			out = append(out, c)
			continue
		}
		found = true
		at := m["lastTransitionTime"]
		if m["status"] != status || at == nil {
			at = now
		}
		out = append(out, map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": at})
	}
	if !found {
		out = append(out, map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": now})
	}
	return out
}

// stringsOf returns the strings of a JSON list (nil for anything else).
func stringsOf(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, e := range s {
		out[i] = e
	}
	return out
}

func anySlice(s []any) []any { return s }

// equalJSON compares two JSON values (maps, lists, strings, numbers, booleans, nil).
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
