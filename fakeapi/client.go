package fakeapi

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// ResourceClient has the method set of client-go's dynamic.ResourceInterface, so it satisfies
// that interface as is; its Namespace method returns *ResourceClient rather than
// dynamic.ResourceInterface, which clientgo.Dynamic (nested module clientgo/) adapts (see the package doc).
type ResourceClient struct {
	srv *Server
	gvr schema.GroupVersionResource
	ns  string
}

// Resource returns a client for gvr, cluster-wide until Namespace is called, like
// dynamic.Interface.Resource. Unknown resources answer every request with 404.
func (s *Server) Resource(gvr schema.GroupVersionResource) *ResourceClient {
	return &ResourceClient{srv: s, gvr: gvr}
}

// Namespace returns a client scoped to namespace ns.
func (c *ResourceClient) Namespace(ns string) *ResourceClient {
	return &ResourceClient{srv: c.srv, gvr: c.gvr, ns: ns}
}

func (c *ResourceClient) write(verb Verb, name string, f func() (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	s := c.srv
	s.lock()
	defer s.mu.Unlock()
	s.advance_locked()
	rq := s.rec.newRequest(verb, c.gvr, c.ns, name, metav1.ListOptions{}, "")
	u, err := f()
	if u != nil {
		rq.ObjectRV = metaStr(u, "resourceVersion")
		if rq.Name == "" {
			rq.Name = metaStr(u, "name")
		}
	}
	s.finishRequest_locked(&rq, err)
	return u, err
}

// ctxErr reports a request whose context is already done. Like an HTTP client, it returns the
// context's error (wrapped), not a server Status: the server never saw the request.
func ctxErr(ctx context.Context) error {
	if ctx != nil && ctx.Err() != nil {
		return fmt.Errorf("fakeapi: request not sent: %w", ctx.Err())
	}
	return nil
}

// Create implements POST (fakeapi.md §5.1). No subresource can be created.
func (c *ResourceClient) Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return c.create(ctx, obj, options, subresources, false, copyObject)
}

// CreateLent is Create for a caller that only reads the answer, as an HTTP front that encodes
// it: the answer is the committed object itself, lent read-only to lendTo as
// ListerWatcher.ListLent lends list items (see "Ownership of objects" in the package
// documentation), instead of a copy. A dry run's answer, never committed, is still a copy.
func (c *ResourceClient) CreateLent(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, lendTo string) (*unstructured.Unstructured, error) {
	if lendTo == "" {
		return nil, fmt.Errorf("fakeapi: CreateLent: empty lendTo")
	}
	return c.createLent(ctx, obj, options, lendTo, false)
}

// CreateHandedOver is CreateLent for an object the caller hands over to the server with
// everything in it, as an HTTP front hands over the object it decoded from a request body: the
// server stores obj's maps and lists themselves, checked and converted in place, instead of a
// copy of them (see "Ownership of objects" in the package documentation). The caller must hold
// no other reference to any of them, and must neither read nor change obj afterwards; the
// answer, lent, is what it may read. Values obj shares with committed objects (which are never
// changed) are allowed. A caller that keeps obj must use Create or CreateLent, which copy it.
func (c *ResourceClient) CreateHandedOver(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, lendTo string) (*unstructured.Unstructured, error) {
	if lendTo == "" {
		return nil, fmt.Errorf("fakeapi: CreateHandedOver: empty lendTo")
	}
	return c.createLent(ctx, obj, options, lendTo, true)
}

// createLent is CreateLent and CreateHandedOver.
func (c *ResourceClient) createLent(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, lendTo string, handedOver bool) (*unstructured.Unstructured, error) {
	return c.create(ctx, obj, options, nil, handedOver, func(u *unstructured.Unstructured) *unstructured.Unstructured {
		s := c.srv
		if res, ok := s.lookup_locked(c.gvr); ok && len(options.DryRun) == 0 {
			if h := res.keys[objKey{metaStr(u, "namespace"), metaStr(u, "name")}]; h != nil && h.latest() == u {
				s.lend_locked(u, h, lendTo, false)
				return u
			}
		}
		return copyObject(u)
	})
}

// CreateRV is Create for a caller that needs nothing of the answer but the created object's
// name and resourceVersion (dry run: those it would have): the same request, with the same
// effects and record, without building the copy of the object that Create returns. Writers
// that discard Create's answer, such as a simulator's workload, save a deep copy per write.
func (c *ResourceClient) CreateRV(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions) (name, resourceVersion string, err error) {
	_, err = c.create(ctx, obj, options, nil, false, func(u *unstructured.Unstructured) *unstructured.Unstructured {
		name, resourceVersion = metaStr(u, "name"), metaStr(u, "resourceVersion")
		return nil
	})
	return name, resourceVersion, err
}

// create is Create and CreateRV: out turns the server's object into the answer (under the lock).
// handedOver says obj is handed over (CreateHandedOver).
func (c *ResourceClient) create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources []string, handedOver bool, out func(*unstructured.Unstructured) *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	name := ""
	if obj != nil && obj.Object != nil {
		name, _ = metaString(obj, "name")
	}
	var answer *unstructured.Unstructured
	_, err := c.write(VerbCreate, name, func() (*unstructured.Unstructured, error) {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		u, err := c.srv.create_locked(c.gvr, c.ns, obj, options, subresources, handedOver)
		if err != nil {
			return nil, err
		}
		answer = out(u)
		return u, nil // for the record only
	})
	return answer, err
}

// Update implements PUT (§5.2); with the subresource "status" it is UpdateStatus.
func (c *ResourceClient) Update(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return c.update(ctx, obj, options, subresources, copyObject)
}

// UpdateRV is Update for a caller that needs nothing of the answer but its resourceVersion: the
// same request (with the subresource "status", UpdateStatus), with the same effects and record,
// without building the copy of the object that Update returns.
func (c *ResourceClient) UpdateRV(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources ...string) (resourceVersion string, err error) {
	_, err = c.update(ctx, obj, options, subresources, func(u *unstructured.Unstructured) *unstructured.Unstructured {
		resourceVersion = metaStr(u, "resourceVersion")
		return nil
	})
	return resourceVersion, err
}

// update is Update and UpdateRV: out turns the server's object into the answer (under the lock).
func (c *ResourceClient) update(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources []string, out func(*unstructured.Unstructured) *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	status, err := statusSubresource(c.gvr, subresources)
	verb := VerbUpdate
	if status {
		verb = VerbUpdateStatus
	}
	name := ""
	if obj != nil && obj.Object != nil {
		name, _ = metaString(obj, "name")
	}
	var answer *unstructured.Unstructured
	_, err = c.write(verb, name, func() (*unstructured.Unstructured, error) {
		if err != nil {
			return nil, err
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		u, err := c.srv.update_locked(c.gvr, c.ns, obj, status, len(options.DryRun) > 0)
		if err != nil {
			return nil, err
		}
		answer = out(u)
		return u, nil // for the record only
	})
	return answer, err
}

// UpdateStatus implements PUT .../status (§5.5): only .status changes, generation stays.
func (c *ResourceClient) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return c.Update(ctx, obj, options, "status")
}

func statusSubresource(gvr schema.GroupVersionResource, subresources []string) (bool, error) {
	switch {
	case len(subresources) == 0:
		return false, nil
	case len(subresources) == 1 && subresources[0] == "status":
		return true, nil
	}
	return false, apierrors.NewNotFound(gvr.GroupResource(), "")
}

func (c *ResourceClient) key(name string) (*resourceStore, objKey, error) {
	res, ok := c.srv.lookup_locked(c.gvr)
	if !ok {
		return nil, objKey{}, apierrors.NewNotFound(c.gvr.GroupResource(), name)
	}
	ns := c.ns
	if !res.info.Namespaced {
		ns = ""
	} else if ns == "" {
		return nil, objKey{}, apierrors.NewBadRequest("the namespace must be set for a namespaced resource")
	}
	if name == "" {
		return nil, objKey{}, apierrors.NewBadRequest("name is required")
	}
	return res, objKey{ns, name}, nil
}

// target_locked takes an injected failure for verb, then resolves the object key of name.
func (c *ResourceClient) target_locked(verb Verb, name string) (*resourceStore, objKey, error) {
	if err := c.srv.takeFailure_locked(verb, c.gvr); err != nil {
		return nil, objKey{}, err
	}
	return c.key(name)
}

// Delete implements DELETE (§5.3): preconditions, finalizers, propagation policy, and graceful
// deletion for kinds that have it.
func (c *ResourceClient) Delete(ctx context.Context, name string, options metav1.DeleteOptions, subresources ...string) error {
	_, err := c.write(VerbDelete, name, func() (*unstructured.Unstructured, error) {
		if len(subresources) > 0 {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		res, key, err := c.target_locked(VerbDelete, name)
		if err != nil {
			return nil, err
		}
		return c.srv.delete_locked(res, key, options)
	})
	return err
}

// DeleteCollection deletes every object matching listOptions (at the current revision), in key
// order, and returns the first error other than NotFound.
func (c *ResourceClient) DeleteCollection(ctx context.Context, options metav1.DeleteOptions, listOptions metav1.ListOptions) error {
	_, err := c.write(VerbDeleteCollection, "", func() (*unstructured.Unstructured, error) {
		s := c.srv
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		res, ok := s.lookup_locked(c.gvr)
		if !ok {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), "")
		}
		if err := s.takeFailure_locked(VerbDeleteCollection, c.gvr); err != nil {
			return nil, err
		}
		listOptions.ResourceVersion, listOptions.ResourceVersionMatch = "", ""
		listOptions.Limit, listOptions.Continue = 0, ""
		req, err := parseRequest(res, listOptions, false)
		if err != nil {
			return nil, err
		}
		ns := c.ns
		if !res.info.Namespaced {
			ns = ""
		}
		page := s.page_locked(res, ns, &req, s.rev, nil, 0)
		for _, item := range page.Items {
			if _, err := s.delete_locked(res, objKey{item.GetNamespace(), item.GetName()}, options); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

// Get implements GET of one object at the latest revision; "status" is accepted as subresource
// for resources that have it.
func (c *ResourceClient) Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return c.write(VerbGet, name, func() (*unstructured.Unstructured, error) {
		status, err := statusSubresource(c.gvr, subresources)
		if err != nil {
			return nil, err
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		res, key, err := c.target_locked(VerbGet, name)
		if err != nil {
			return nil, err
		}
		if status && !res.info.Status {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		cur := c.srv.current_locked(res, key)
		if cur == nil {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		return copyObject(cur), nil
	})
}

// List implements LIST (fakeapi.md §3).
func (c *ResourceClient) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return c.srv.list(c.gvr, c.ns, opts)
}

// Watch implements WATCH (fakeapi.md §4) for a concurrent consumer: the watch is a [*Watcher] whose ResultChan is fed by the adapter goroutine, which stops when ctx is done or on Stop.
func (c *ResourceClient) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return c.srv.watchConcurrent(ctx, c.gvr, c.ns, opts)
}

// Patch implements PATCH with JSON patch (RFC 6902) and JSON merge patch (RFC 7386) as an atomic
// read-modify-write: at most one MODIFIED, none for a no-op (fakeapi.md §5.4). A patch without
// metadata.resourceVersion is unconditional. Strategic merge patch and apply patches are
// answered 405 MethodNotSupported (they need schemas fakeapi does not model).
func (c *ResourceClient) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return c.write(VerbPatch, name, func() (*unstructured.Unstructured, error) {
		s := c.srv
		status, err := statusSubresource(c.gvr, subresources)
		if err != nil {
			return nil, err
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		if pt != types.JSONPatchType && pt != types.MergePatchType {
			return nil, apierrors.NewMethodNotSupported(c.gvr.GroupResource(), "patch "+string(pt))
		}
		res, key, err := c.target_locked(VerbPatch, name)
		if err != nil {
			return nil, err
		}
		if status && !res.info.Status {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		cur := s.live_locked(res, key)
		if cur == nil {
			return nil, apierrors.NewNotFound(c.gvr.GroupResource(), name)
		}
		u, err := PatchObject(c.gvr.GroupResource(), name, cur, pt, data)
		if err != nil {
			return nil, err
		}
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			// md is adopted by input, not copied: it is written through setField (objects.go).
			if _, has := md["resourceVersion"]; !has {
				setField(md, "resourceVersion", cur.GetResourceVersion())
			}
			// Name and namespace come from the URL; a patch cannot move an object.
			setField(md, "name", key.name)
			setField(md, "namespace", cur.GetNamespace())
			if key.ns == "" {
				delete(md, "namespace")
			}
		}
		in, err := s.input(res, key.ns, u, cur, true) // PatchObject's result: the server's own
		if err != nil {
			return nil, err
		}
		if errs := validateMeta(res, in, cur); len(errs) > 0 {
			return nil, s.invalid(res, name, errs)
		}
		u, err = s.applyUpdate_locked(res, key, cur, in, true, status, len(options.DryRun) > 0)
		if err != nil {
			return nil, err
		}
		return copyObject(u), nil
	})
}

// Apply (server-side apply) is not modelled: it answers 405 MethodNotSupported.
func (c *ResourceClient) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, options metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error) {
	return c.write(VerbPatch, name, func() (*unstructured.Unstructured, error) {
		return nil, apierrors.NewMethodNotSupported(c.gvr.GroupResource(), "apply")
	})
}

// ApplyStatus is not modelled: it answers 405 MethodNotSupported.
func (c *ResourceClient) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, options metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return c.Apply(ctx, name, obj, options, "status")
}

// ListerWatcher is the list/watch adapter for one resource and namespace. It has the method sets
// of client-go's cache.ListerWatcher and cache.ListerWatcherWithContext, plus
// IsWatchListSemanticsUnSupported, which client-go consults to choose between the watch-list
// start-up and classic list+watch (fakeapi.md §1.1). Configure it before handing it to a
// reflector; its fields are not synchronised.
type ListerWatcher struct {
	srv *Server
	gvr schema.GroupVersionResource
	ns  string
	// Name labels this client's requests in the record.
	Name string
	// Replica pins every request to one replica when >= 0 (default -1: the routing policy).
	Replica int
	// WatchListUnsupported is what IsWatchListSemanticsUnSupported returns: true forces
	// client-go's classic list+watch; false (default) lets it use watch-list.
	WatchListUnsupported bool
	// Tweak, if set, edits the options of every request (selectors, for example), as
	// client-go's TweakListOptionsFunc does.
	Tweak func(*metav1.ListOptions)
	// target keeps what ListChangesLent's requests look up about gvr (under the server's lock).
	target requestTarget
}

// ListerWatcher returns a list/watch adapter for gvr in namespace ns ("" for all).
func (s *Server) ListerWatcher(gvr schema.GroupVersionResource, ns string) *ListerWatcher {
	return &ListerWatcher{srv: s, gvr: gvr, ns: ns, Replica: -1}
}

// List implements cache.Lister.
func (lw *ListerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

// Watch implements cache.Watcher.
func (lw *ListerWatcher) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}

// ListWithContext implements cache.ListerWithContext.
func (lw *ListerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	l, err := lw.list(options, "")
	if err != nil {
		return nil, err // not l: a nil *UnstructuredList is not a nil runtime.Object
	}
	return l, nil
}

// ListLent is List for a consumer that only reads what it receives, as an informer treats its
// cache: the items share the server's committed objects instead of being copies, which saves a
// deep copy per item. The server checks that they stay unchanged (see "Ownership of objects" in
// the package documentation): a change is reported by [Lending.Mutation] and
// [Lending.Check] as a [*MutationError] naming the ListerWatcher's Name.
func (lw *ListerWatcher) ListLent(options metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return lw.list(options, lw.lendName())
}

// list performs a LIST through this adapter (its name, pin and tweak apply), lending the items to
// lendTo when it is set.
func (lw *ListerWatcher) list(options metav1.ListOptions, lendTo string) (*unstructured.UnstructuredList, error) {
	if lw.Tweak != nil {
		options = lw.tweak(options)
	}
	s := lw.srv
	s.lock()
	defer s.mu.Unlock()
	return s.list_locked(lw.gvr, lw.ns, options, lw.Replica, lw.Name, lendTo)
}

// OpenWatchLent is OpenWatch for a consumer that only reads what it receives: the events'
// objects are the server's committed objects, lent as ListLent lends list items.
func (lw *ListerWatcher) OpenWatchLent(options metav1.ListOptions) (*Watcher, error) {
	return lw.openWatch(options, lw.lendName())
}

// tweak returns options as Tweak edits them. Tweak edits a copy of its own: options whose
// address a request took would be moved to the heap at every request, with Tweak or without
// (a control plane's scan makes one LIST per served resource).
func (lw *ListerWatcher) tweak(options metav1.ListOptions) metav1.ListOptions {
	lw.Tweak(&options)
	return options
}

// lendName is the name a lent object's record gives its consumer.
func (lw *ListerWatcher) lendName() string {
	if lw.Name != "" {
		return lw.Name
	}
	return "an unnamed ListerWatcher"
}

// WatchWithContext implements cache.WatcherWithContext; the watch stops when ctx is done.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	w, err := lw.OpenWatch(options)
	if err != nil {
		return nil, err
	}
	w.startPump(ctx)
	return w, nil
}

// OpenWatch opens a pull-based watch through this adapter (its name, pin and tweak apply).
func (lw *ListerWatcher) OpenWatch(options metav1.ListOptions) (*Watcher, error) {
	return lw.openWatch(options, "")
}

// openWatch opens a watch through this adapter, lending its events' objects to lendTo when it
// is set.
func (lw *ListerWatcher) openWatch(options metav1.ListOptions, lendTo string) (*Watcher, error) {
	if lw.Tweak != nil {
		options = lw.tweak(options)
	}
	s := lw.srv
	s.lock()
	defer s.mu.Unlock()
	w, err := s.openWatch_locked(lw.gvr, lw.ns, options, lw.Replica, lw.Name)
	if err != nil {
		return nil, err
	}
	w.lendTo = lendTo
	return w, nil
}

// IsWatchListSemanticsUnSupported reports WatchListUnsupported (client-go's
// util/watchlist.DoesClientNotSupportWatchListSemantics looks for this method).
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return lw.WatchListUnsupported }

// PatchObject returns what a JSON patch (RFC 6902) or JSON merge patch (RFC 7386) makes of obj,
// which it does not change, with the answers of [ResourceClient.Patch] for a bad patch: 400 for
// one that does not parse, 422 for one that does not apply (a failed test, a missing path). The
// result always has a metadata object. gr and name qualify the errors. Other patch types are a
// 415: they need schemas (see [Mutation]).
func PatchObject(gr schema.GroupResource, name string, obj *unstructured.Unstructured, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	if pt != types.JSONPatchType && pt != types.MergePatchType {
		return nil, apierrors.NewGenericServerResponse(415, "patch", gr, name, fmt.Sprintf("fakeapi: patch type %q needs a schema", pt), 0, false)
	}
	if obj == nil || obj.Object == nil {
		return nil, apierrors.NewBadRequest("fakeapi: no object to patch")
	}
	p, err := decodeJSON(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fakeapi: invalid patch: %v", err))
	}
	doc, err := normalize(obj.Object, 0) // a private copy to patch in place
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fakeapi: invalid object: %v", err))
	}
	var out any
	if pt == types.MergePatchType {
		if _, isObj := p.(map[string]any); !isObj {
			return nil, apierrors.NewBadRequest("fakeapi: a merge patch must be a JSON object")
		}
		out = mergePatch(doc, p)
	} else if out, err = jsonPatch(doc, p); err != nil {
		var pe *patchError
		if errors.As(err, &pe) {
			// kube-apiserver's answer, message and all, plus the cause it drops (it builds the
			// 422 with no causes): why the patch failed, in Details.Causes.
			se := apierrors.NewGenericServerResponse(422, "patch", gr, name, pe.msg, 0, false)
			se.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Message: pe.msg}}
			return nil, se
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fakeapi: invalid patch: %v", err))
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, apierrors.NewBadRequest("fakeapi: patched document is not an object")
	}
	if m["metadata"] == nil {
		m["metadata"] = map[string]any{}
	}
	return &unstructured.Unstructured{Object: m}, nil
}
