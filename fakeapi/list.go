package fakeapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// continueToken binds a page boundary to a snapshot revision (fakeapi.md §3.3). RV -1 means
// "continue at the latest revision", the token a 410 hands out.
type continueToken struct {
	V     string `json:"v"`
	RV    int64  `json:"rv"`
	NS    string `json:"ns,omitempty"`
	Start string `json:"start"`
}

func encodeContinue(rv int64, after objKey) string {
	b, _ := json.Marshal(continueToken{V: "meta.k8s.io/v1", RV: rv, NS: after.ns, Start: after.name})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, err
	}
	if t.V != "meta.k8s.io/v1" || t.RV < -1 || t.RV == 0 || t.Start == "" {
		return t, fmt.Errorf("malformed token")
	}
	return t, nil
}

// list answers LIST on gvr in namespace ns ("" for all) following the dispatch table of
// fakeapi.md §3.1; the serving replica is picked by the routing policy.
func (s *Server) list(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	s.lock()
	defer s.mu.Unlock()
	return s.list_locked(gvr, ns, opts, -1, "", "")
}

// list_locked answers a LIST made by client; its items are lent to lendTo (lend.go) when that
// is set, and copies otherwise.
func (s *Server) list_locked(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, pin int, client, lendTo string) (*unstructured.UnstructuredList, error) {
	rq := s.rec.newRequest(VerbList, gvr, ns, "", opts, client)
	l, err := s.listInner_locked(gvr, ns, opts, pin, &rq, lendTo)
	if l != nil {
		rq.ListRV, rq.Continue = l.GetResourceVersion(), l.GetContinue()
	}
	s.finishRequest_locked(&rq, err)
	return l, err
}

func (s *Server) listInner_locked(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, pin int, rq *RequestRecord, lendTo string) (*unstructured.UnstructuredList, error) {
	res, ns, req, err := s.readRequest_locked(VerbList, gvr, ns, opts)
	if err != nil {
		return nil, err
	}
	req.lendTo = lendTo
	if req.cont != "" {
		// §3.1 rows 9-10: continuation pages read the token's snapshot from storage.
		if req.rvKind == rvExact {
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		tok, err := decodeContinue(req.cont)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		after := objKey{ns: tok.NS, name: tok.Start}
		if tok.RV == -1 {
			return s.page_locked(res, ns, &req, s.rev, &after, req.limit), nil
		}
		if uint64(tok.RV) > s.rev {
			return nil, apierrors.NewBadRequest("invalid continue token: resource version is in the future")
		}
		if uint64(tok.RV) < s.floor {
			return nil, errContinueTooOld(encodeContinue(-1, after))
		}
		return s.page_locked(res, ns, &req, uint64(tok.RV), &after, req.limit), nil
	}
	r := s.route_locked(pin)
	rq.Replica = r.index
	ready := r.ready(s.clk.Now())
	// Not-ready caches delegate limited, selector-free lists to etcd (§3.2 row 4).
	delegate := !ready && req.limit > 0 && req.noSelector
	switch req.rvKind {
	case rvUnset:
		// Most recent: a consistent read, whatever the cache's state (§3.1 row 1).
		return s.page_locked(res, ns, &req, s.rev, nil, req.limit), nil
	case rvAny:
		if delegate {
			return s.page_locked(res, ns, &req, s.rev, nil, req.limit), nil
		}
		if !ready {
			return nil, apierrors.NewTooManyRequests("storage is (re)initializing", 1)
		}
		// "Any": the cache's state, however old; the cache ignores limit (§3.1 row 2, §3.3).
		return s.page_locked(res, ns, &req, r.cacheRV, nil, 0), nil
	}
	n := req.rv
	exact := req.rvm == metav1.ResourceVersionMatchExact || (req.rvm == "" && req.limit > 0)
	if exact || delegate {
		// Exact N from storage (§3.1 rows 4, 6): 410 below the floor, 504 in the future.
		if n > s.rev {
			return nil, newTooLargeResourceVersion(n, s.rev, 0)
		}
		if !exact {
			return s.page_locked(res, ns, &req, s.rev, nil, req.limit), nil
		}
		if n < s.floor {
			return nil, errListTooOld()
		}
		return s.page_locked(res, ns, &req, n, nil, req.limit), nil
	}
	if !ready {
		return nil, apierrors.NewTooManyRequests("storage is (re)initializing", 1)
	}
	// Not older than N from the cache (§3.1 rows 3, 5), which waits up to ResourceVersionWait.
	if r.cacheRV < n {
		if !s.reachesWithinWait_locked(r, n) {
			return nil, newTooLargeResourceVersion(n, r.cacheRV, 1)
		}
		s.advanceReplica_locked(r, n)
	}
	return s.page_locked(res, ns, &req, r.cacheRV, nil, req.limit), nil
}

// readRequest_locked is the common start of LIST and WATCH: due timed work runs first, then the
// resource is looked up (404), its scope applied, an injected failure taken, and the options
// parsed and validated.
func (s *Server) readRequest_locked(verb Verb, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*resourceStore, string, request, error) {
	return s.readRequestOf_locked(verb, gvr, ns, opts, nil)
}

// readRequestOf_locked is readRequest_locked for a client that keeps what its requests look up
// about their resource in t (nil: none).
func (s *Server) readRequestOf_locked(verb Verb, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, t *requestTarget) (*resourceStore, string, request, error) {
	s.advance_locked()
	res, ok := t.store(s, gvr)
	if !ok {
		return nil, "", request{}, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	if !res.info.Namespaced {
		ns = ""
	}
	if err := s.takeFailure_locked(verb, gvr); err != nil {
		return nil, "", request{}, err
	}
	req, err := parseRequest(res, opts, verb == VerbWatch)
	if err != nil {
		return nil, "", request{}, err
	}
	return res, ns, req, nil
}

// reachesWithinWait_locked reports whether replica r would process revision n within the wait
// window. The core cannot block, so the wait is modelled by moving the cache forward at once
// when it would have caught up in time (a frozen cache never does).
func (s *Server) reachesWithinWait_locked(r *replica, n uint64) bool {
	if r.frozen || n > s.rev {
		return false
	}
	if r.lag == 0 {
		return true
	}
	i := s.logIndexAfter(n - 1)
	if i >= s.log.len() {
		return true
	}
	return !s.log.at(i).at.Add(r.lag).After(s.clk.Now().Add(s.cfg.ResourceVersionWait))
}

// page_locked reads the objects in scope at revision rev, after key after, up to limit (0: all),
// and stamps the list RV and, when more remain, a continue token bound to rev (§3.3).
func (s *Server) page_locked(res *resourceStore, ns string, req *request, rev uint64, after *objKey, limit int64) *unstructured.UnstructuredList {
	// What SetAPIVersion, SetKind and SetResourceVersion would write, built at its size: a
	// control plane's scan lists every resource, most of them empty.
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": res.info.GVR.GroupVersion().String(),
		"kind":       res.info.Kind + "List",
		"metadata":   map[string]any{"resourceVersion": FormatRV(rev)},
	}}
	var last objKey
	remaining := int64(0)
	for _, h := range res.sortedKeys() {
		if after != nil && compareKeys(h.key, *after) <= 0 {
			continue
		}
		if ns != "" && h.key.ns != ns {
			continue
		}
		obj, _ := h.atRev(rev)
		if obj == nil || !req.matches(res, ns, obj) {
			continue
		}
		if limit > 0 && int64(len(list.Items)) >= limit {
			remaining++
			if !req.noSelector {
				break // remainingItemCount is only reported without selectors
			}
			continue
		}
		if req.lendTo != "" {
			// Lent: the item shares the stored object's content, which the record guards.
			s.lend_locked(obj, h, req.lendTo, req.observer)
			list.Items = append(list.Items, unstructured.Unstructured{Object: obj.Object})
		} else {
			// A deep copy of the content, built in place: copyObject would allocate an
			// Unstructured only to copy it into Items.
			list.Items = append(list.Items, unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj.Object)})
		}
		last = h.key
	}
	if remaining > 0 {
		list.SetContinue(encodeContinue(int64(rev), last))
		if req.noSelector {
			list.SetRemainingItemCount(&remaining)
		}
	}
	return list
}
