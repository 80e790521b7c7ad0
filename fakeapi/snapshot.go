package fakeapi

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Snapshot returns the live objects of gvr in namespace ns ("" for all; ignored for a
// cluster-scoped resource) that match the label and field selectors of sel, at the current
// revision, sorted by namespace and name, as deep copies. The list's resourceVersion is the
// current revision.
//
// It is an observer's read, not a request: it runs no due timed work, routes to no replica,
// consumes no injected failure, draws nothing from Config.Rand and records nothing, so reading
// the state to check it changes no later behaviour of the server. Only sel's LabelSelector and
// FieldSelector are used; a selector that does not parse, or a field the resource does not
// support, is an error, as it would be for a LIST.
func (s *Server) Snapshot(gvr schema.GroupVersionResource, ns string, sel metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return s.snapshot(gvr, ns, sel, "", "Snapshot")
}

// Snapshot is [Server.Snapshot] for an observer that only reads what it receives (a host comparing
// its informers' caches with the server): the items share the server's committed objects, lent
// to the observer named to as ListerWatcher.ListLent lends them, instead of being deep copies.
// It is as free of side effects as Server.Snapshot, except that lending records the items it lends.
func (l Lending) Snapshot(gvr schema.GroupVersionResource, ns string, sel metav1.ListOptions, to string) (*unstructured.UnstructuredList, error) {
	if to == "" {
		return nil, fmt.Errorf("fakeapi: Lending.Snapshot: empty observer name")
	}
	return l.s.snapshot(gvr, ns, sel, to, "Lending.Snapshot")
}

func (s *Server) snapshot(gvr schema.GroupVersionResource, ns string, sel metav1.ListOptions, lendTo, method string) (*unstructured.UnstructuredList, error) {
	s.lock()
	defer s.mu.Unlock()
	res, req, err := s.selectors_locked(method, gvr, sel)
	if err != nil {
		return nil, err
	}
	if !res.info.Namespaced {
		ns = ""
	}
	req.lendTo, req.observer = lendTo, true
	return s.page_locked(res, ns, &req, s.rev, nil, 0), nil
}

// CheckSelectors reports whether a LIST or WATCH of gvr would accept the label and field
// selectors of sel: that they parse, and that the resource supports the fields named. It reads
// no object and changes nothing.
func (s *Server) CheckSelectors(gvr schema.GroupVersionResource, sel metav1.ListOptions) error {
	s.mu.Lock() // a pure read
	defer s.mu.Unlock()
	_, _, err := s.selectors_locked("CheckSelectors", gvr, sel)
	return err
}

// selectors_locked looks gvr up and parses sel's label and field selectors as a LIST would; its
// errors name method.
func (s *Server) selectors_locked(method string, gvr schema.GroupVersionResource, sel metav1.ListOptions) (*resourceStore, request, error) {
	res, ok := s.lookup_locked(gvr)
	if !ok {
		return nil, request{}, fmt.Errorf("fakeapi: %s: the server does not serve %v", method, gvr)
	}
	req, err := parseRequest(res, metav1.ListOptions{LabelSelector: sel.LabelSelector, FieldSelector: sel.FieldSelector}, false)
	if err != nil {
		return nil, request{}, fmt.Errorf("fakeapi: %s: %w", method, err)
	}
	return res, req, nil
}

// Commit is one write the store committed, as [Server.OnCommit] observers see it.
type Commit struct {
	// Revision is the write's revision, the object's new resourceVersion.
	Revision uint64
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type      watch.EventType
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

// OnCommit adds an observer called for every write the store commits, in revision order,
// whichever client made it (the typed client, a ListerWatcher's owner, timed work such as a
// graceful deletion ending). Observers cannot be removed: a host that narrates writes keeps
// narrating them. It is called with the server's lock held: it must not call the Server.
func (s *Server) OnCommit(f func(Commit)) {
	if f == nil {
		return
	}
	s.lock()
	defer s.mu.Unlock()
	s.commitObservers = append(s.commitObservers, f)
}

func (s *Server) notifyCommit_locked(res *resourceStore, key objKey, typ watch.EventType, rev uint64) {
	for _, f := range s.commitObservers {
		f(Commit{Revision: rev, Type: typ, Resource: res.info.GVR, Namespace: key.ns, Name: key.name})
	}
}
