package controlplane

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// view is one resource's objects (in every namespace) as a component last read them, in key
// order, each with what the component derives from it (val). It is kept between scans and
// brought up to date at each one from what changed on the server since it was read
// (fakeapi.ListerWatcher.ListChangesLent), as kube-controller-manager's informers keep their
// caches from watch events, so that a scan costs what changed, not what is stored.
//
// A scan still makes one LIST request per resource, the request a full list makes (the same
// record, the same injected failure taken, the same replica routed to), so the server and
// everything that reads its records see the same run as with a full list at every scan. When the
// server's history no longer reaches back to the view's revision (a compaction), the answer is
// the whole list and the view is compared with it key by key: a compaction never leaves the
// view wrong. With stale reads (Config.StaleReads) every scan is a full list at
// resourceVersion "0", whose replica may be behind the view's revision, compared the same way.
type view[T any] struct {
	lw      *fakeapi.ListerWatcher
	rev     uint64 // the revision read last; 0 before the first read
	entries []viewEntry[T]
}

type viewEntry[T any] struct {
	ns, name string
	obj      *unstructured.Unstructured // lent by the server: only read
	val      T
}

// viewHooks are what a component derives from an object of a view: add is called with each
// object that enters the view (new, or a new version of a key), drop with the value of each
// that leaves it (deleted, or replaced by its new version; drop comes first).
type viewHooks[T any] struct {
	add  func(obj *unstructured.Unstructured) T
	drop func(val T)
}

func newView[T any](b *base, gvr schema.GroupVersionResource) view[T] {
	lw := b.srv.ListerWatcher(gvr, "")
	lw.Name = b.name
	return view[T]{lw: lw}
}

// forget empties the view (calling drop for each entry): the next read is a full one.
func (v *view[T]) forget(h viewHooks[T]) {
	for _, e := range v.entries {
		h.drop(e.val)
	}
	v.entries, v.rev = nil, 0
}

func compareEntryKey[T any](e viewEntry[T], k [2]string) int {
	return cmp.Or(cmp.Compare(e.ns, k[0]), cmp.Compare(e.name, k[1]))
}

// refresh reads v's resource from the server, as base.list would, and brings v up to date.
func refresh[T any](b *base, v *view[T], h viewHooks[T]) error {
	if b.rebuild {
		v.forget(h)
	}
	if b.stale {
		l, err := v.lw.ListLent(metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		rv, err := strconv.ParseUint(l.GetResourceVersion(), 10, 64)
		if err != nil {
			return fmt.Errorf("list of %s: resourceVersion %q: %w", v.lw.Name, l.GetResourceVersion(), err)
		}
		b.readAt(rv)
		v.replace(l.Items, h)
		v.rev = rv
		return nil
	}
	c, err := v.lw.ListChangesLent(metav1.ListOptions{}, v.rev)
	if err != nil {
		return err
	}
	b.readAt(c.Revision)
	if c.Full {
		v.replace(c.Items, h)
	} else {
		for i := range c.Changes {
			v.apply(&c.Changes[i], h)
		}
	}
	v.rev = c.Revision
	return nil
}

// apply brings one changed key of v up to date.
func (v *view[T]) apply(ch *fakeapi.Change, h viewHooks[T]) {
	i, found := slices.BinarySearchFunc(v.entries, [2]string{ch.Namespace, ch.Name}, compareEntryKey[T])
	if found {
		h.drop(v.entries[i].val)
	}
	if ch.Type == watch.Deleted {
		if found {
			v.entries = slices.Delete(v.entries, i, i+1)
		}
		return
	}
	obj := &ch.Object
	e := viewEntry[T]{ns: ch.Namespace, name: ch.Name, obj: obj, val: h.add(obj)}
	if found {
		v.entries[i] = e
	} else {
		v.entries = slices.Insert(v.entries, i, e)
	}
}

// replace makes v hold items (a whole list, in key order): keys whose object is the one v holds
// (the same content) keep their entry, others are dropped or added.
func (v *view[T]) replace(items []unstructured.Unstructured, h viewHooks[T]) {
	next := make([]viewEntry[T], 0, len(items))
	old := v.entries
	for i := range items {
		obj := &items[i]
		k := [2]string{obj.GetNamespace(), obj.GetName()}
		for len(old) > 0 && compareEntryKey(old[0], k) < 0 {
			h.drop(old[0].val)
			old = old[1:]
		}
		if len(old) > 0 && compareEntryKey(old[0], k) == 0 {
			if sameContent(old[0].obj, obj) {
				next = append(next, old[0])
				old = old[1:]
				continue
			}
			h.drop(old[0].val)
			old = old[1:]
		}
		next = append(next, viewEntry[T]{ns: k[0], name: k[1], obj: obj, val: h.add(obj)})
	}
	for _, e := range old {
		h.drop(e.val)
	}
	v.entries = next
}

// sameContent reports whether a and b are the same committed object lent twice: the same
// content map (a committed object is never changed, so the same map is the same version).
func sameContent(a, b *unstructured.Unstructured) bool {
	return reflect.ValueOf(a.Object).UnsafePointer() == reflect.ValueOf(b.Object).UnsafePointer()
}
