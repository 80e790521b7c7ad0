package fakeapi

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// ListChanges is the answer of [ListerWatcher.ListChangesLent]: a LIST of everything, told as
// what changed since a revision the caller has already read.
type ListChanges struct {
	// Revision is the list's revision (its resourceVersion): the answer is the state there.
	Revision uint64
	// Full is set when Items hold the whole list, because the caller had read nothing (since
	// 0) or the server's history no longer reaches back to since (compacted or trimmed): the
	// caller replaces what it holds with Items.
	Full bool
	// Items is the whole list in key order when Full, lent as ListLent lends list items.
	Items []unstructured.Unstructured
	// Changes are, when not Full, the keys written in (since, Revision], one per key with its
	// state at Revision, in the order of each key's last write.
	Changes []Change
}

// Change is one key of a [ListChanges]: what it holds at the list's revision.
type Change struct {
	// Type is watch.Deleted when the key holds nothing at the list's revision (it may have
	// been created since as well), else watch.Added when it held nothing at since (as far as
	// the server can tell: a key deleted and recreated since is Added) and watch.Modified
	// otherwise.
	Type watch.EventType
	// Namespace and Name are the key.
	Namespace, Name string
	// Object is the committed object (lent), or has a nil Object map for a deletion.
	Object unstructured.Unstructured
}

// ListChangesLent is ListLent for a consumer that keeps what it read and wants only what
// changed since revision since (0 when it holds nothing yet): a control-plane component that
// keeps its view of the server between scans, as kube-controller-manager's informers do,
// instead of relisting everything.
//
// It is the same request as ListLent with the same options, with the same effects on the
// server: the same request record (client, options, replica, resourceVersion), due timed work
// run, an injected failure for LIST taken, a replica routed to. Only the answer differs: when
// the server still holds every write after since it answers with the keys written since
// (Changes), which costs what changed, not what is stored; otherwise with the whole list
// (Full), so that a compaction never leaves the caller with a wrong view.
//
// Only a consistent read of everything is answered this way: options (after Tweak) with no
// resourceVersion, continue token, limit or selector. Any other options are an error, and no
// request is made.
//
// The answer is a value, not a pointer: a read that finds nothing changed (most of a control
// plane's, which reads every served resource at each scan) allocates nothing.
func (lw *ListerWatcher) ListChangesLent(options metav1.ListOptions, since uint64) (ListChanges, error) {
	if lw.Tweak != nil {
		options = lw.tweak(options)
	}
	if err := consistentReadOfAll(options); err != nil {
		return ListChanges{}, err
	}
	s := lw.srv
	s.lock()
	defer s.mu.Unlock()
	// The steps of list_locked for a LIST without resourceVersion (§3.1 row 1).
	rq := s.rec.newRequest(VerbList, lw.gvr, lw.ns, "", options, lw.Name)
	c, err := s.listChanges_locked(lw, options, since, &rq)
	if err == nil {
		rq.ListRV = FormatRV(c.Revision)
	}
	s.finishRequestOf_locked(&rq, err, &lw.target)
	return c, err
}

// consistentReadOfAll refuses the options ListChangesLent does not answer.
func consistentReadOfAll(o metav1.ListOptions) error {
	var what string
	switch {
	case o.ResourceVersion != "" || o.ResourceVersionMatch != "":
		what = "a resourceVersion"
	case o.Continue != "":
		what = "a continue token"
	case o.Limit != 0:
		what = "a limit"
	case o.LabelSelector != "" || o.FieldSelector != "":
		what = "a selector"
	case o.Watch || o.AllowWatchBookmarks || o.SendInitialEvents != nil:
		what = "watch options"
	default:
		return nil
	}
	return fmt.Errorf("fakeapi: ListChangesLent answers a consistent read of everything: the options have %s", what)
}

func (s *Server) listChanges_locked(lw *ListerWatcher, options metav1.ListOptions, since uint64, rq *RequestRecord) (ListChanges, error) {
	res, ns, req, err := s.readRequestOf_locked(VerbList, lw.gvr, lw.ns, options, &lw.target)
	if err != nil {
		return ListChanges{}, err
	}
	req.lendTo = lw.lendName()
	rq.Replica = s.route_locked(lw.Replica).index
	rev := s.rev
	// The log holds every write after kept (trim_locked): a caller that read at or after kept
	// can be told what changed since; one that read earlier, or nothing, gets everything.
	if since == 0 || since < s.kept || since > rev {
		page := s.page_locked(res, ns, &req, rev, nil, 0)
		return ListChanges{Revision: rev, Full: true, Items: page.Items}, nil
	}
	c := ListChanges{Revision: rev}
	for i := s.logIndexAfter(since); i < s.log.len(); i++ {
		e := s.log.at(i)
		h := e.h
		if h.res != res || (ns != "" && h.key.ns != ns) {
			continue
		}
		// Only a key's last write counts: the state at rev is its newest version.
		if last := h.versions[len(h.versions)-1]; last.rev != e.rev {
			continue
		}
		ch := Change{Type: watch.Modified, Namespace: h.key.ns, Name: h.key.name}
		switch {
		case e.typ == watch.Deleted:
			ch.Type = watch.Deleted
		default:
			if before, _ := h.atRev(since); before == nil {
				ch.Type = watch.Added
			}
			s.lend_locked(e.obj, h, req.lendTo, false)
			ch.Object = unstructured.Unstructured{Object: e.obj.Object}
		}
		c.Changes = append(c.Changes, ch)
	}
	return c, nil
}
