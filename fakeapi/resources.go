package fakeapi

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddResource starts serving r, a resource the configuration did not name: what kube-apiserver
// does when a CustomResourceDefinition is established. r is validated as Config.Resources
// entries are; a resource already served is an error (RemoveResource it first). A resource
// served again after RemoveResource starts empty: objects and watches of its earlier life are
// not its own (they belong to the removed store, which nothing can reach any more).
//
// The change is part of the server's state: Config().Resources lists r from now on, at the end.
func (s *Server) AddResource(r Resource) error {
	r, err := r.validated()
	if err != nil {
		return err
	}
	s.lock()
	defer s.mu.Unlock()
	if _, ok := s.resources[r.GVR]; ok {
		return fmt.Errorf("fakeapi: resource %v is already served", r.GVR)
	}
	s.resources[r.GVR] = &resourceStore{info: r, keys: make(map[objKey]*keyHistory)}
	s.cfg.Resources = append(slices.Clone(s.cfg.Resources), r)
	return nil
}

// RemoveResource stops serving gvr: every request naming it afterwards is answered as for a
// resource that never existed (404 NotFound), as kube-apiserver answers once a
// CustomResourceDefinition is gone. The resource must hold no live object: delete them first,
// as kube-apiserver's finalizer of CustomResourceDefinitions does, so that every watcher is sent
// their deletions. Watches already open stay open until they end as any watch ends (their
// deadline, a stop, a fault): they receive nothing more, and the events they still hold are
// delivered.
func (s *Server) RemoveResource(gvr schema.GroupVersionResource) error {
	s.lock()
	defer s.mu.Unlock()
	res, ok := s.resources[gvr]
	if !ok {
		return fmt.Errorf("fakeapi: resource %v is not served", gvr)
	}
	live := 0
	for _, h := range res.keys { // a count: the order does not matter
		if h.latest() != nil {
			live++
		}
	}
	if live > 0 {
		return fmt.Errorf("fakeapi: resource %v still holds %d objects: delete them first", gvr, live)
	}
	delete(s.resources, gvr)
	s.cfg.Resources = slices.DeleteFunc(slices.Clone(s.cfg.Resources), func(r Resource) bool { return r.GVR == gvr })
	return nil
}

// UpdateResource changes the description of gvr, a served resource, keeping its objects: what
// kube-apiserver does when a CustomResourceDefinition gains a subresource, say. The scope cannot
// change while the resource holds objects (kube-apiserver refuses a scope change outright). The
// new description applies to the writes and reads that follow; objects already stored are left
// as they are.
func (s *Server) UpdateResource(r Resource) error {
	r, err := r.validated()
	if err != nil {
		return err
	}
	s.lock()
	defer s.mu.Unlock()
	res, ok := s.resources[r.GVR]
	if !ok {
		return fmt.Errorf("fakeapi: resource %v is not served", r.GVR)
	}
	if r.Namespaced != res.info.Namespaced {
		for _, h := range res.keys { // a check: the order does not matter
			if h.latest() != nil {
				return fmt.Errorf("fakeapi: resource %v holds objects: its scope cannot change", r.GVR)
			}
		}
	}
	res.info = r
	for i := range s.cfg.Resources {
		if s.cfg.Resources[i].GVR == r.GVR {
			s.cfg.Resources = slices.Clone(s.cfg.Resources)
			s.cfg.Resources[i] = r
			break
		}
	}
	return nil
}
