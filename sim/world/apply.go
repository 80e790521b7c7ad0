package world

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/informersim/informersim/fakeapi"
)

// Apply performs op on the apiserver now and settles the world. Writes are narrated as actor
// "apiserver" ("ADDED obj=pods/default/a rv=2"), like every write to the apiserver. An invalid
// op (see Op's fields) is returned and does nothing; write errors (404, 409, 422...) are
// returned and narrated; neither fails the run. OpSleep does nothing here: only Script moves
// time. When the write reveals that an object an informer handed out was changed, the run has
// failed: Apply returns the read-only-objects *Violation (see Settle).
func (w *World) Apply(op Op) error {
	op, err := w.check(op)
	if err != nil {
		return err
	}
	err = w.apply(op, false)
	if v := w.settleOutside(); v != nil {
		// The op's write revealed a change to an object an informer handed out: the run has
		// failed with read-only-objects, which matters more than the write's own answer.
		return v
	}
	return err
}

// check is everything the world can tell about op before running it: op.validate, and what the
// kind's row checks against the world (a write's resource is served and its namespace fits the
// resource's scope, a replica exists, a named informer is the world's). It returns the op to
// run: op with its Content converted to unstructured's form in new maps (see Op.Content).
func (w *World) check(op Op) (Op, error) {
	op, err := op.validate()
	if err != nil {
		return op, err
	}
	if t := opRows[op.Kind].target; t != nil {
		if err := t(w, op); err != nil {
			if op.Kind.write() {
				return op, err // target's errors name the op already
			}
			return op, fmt.Errorf("world: op %s: %w", op.Kind, err)
		}
	}
	return op, nil
}

// target returns the resource, and the namespace the op writes in ("" for cluster-scoped).
func (w *World) target(op Op) (fakeapi.Resource, string, error) {
	gvr := op.Resource
	if gvr.Empty() {
		gvr = w.cfg.DefaultResource
	}
	res, ok := w.resourceKind(gvr)
	if !ok {
		return res, "", fmt.Errorf("world: op %s: the apiserver does not serve %s", op.Kind, w.notServed(gvr))
	}
	ns := op.Namespace
	if !res.Namespaced {
		if ns != "" {
			return res, "", fmt.Errorf("world: op %s: %v is cluster-scoped; Namespace must be empty", op.Kind, gvr)
		}
		return res, "", nil
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	return res, ns, nil
}

// write performs a write op through the apiserver's client API; the commit hook narrates it.
func (w *World) write(op Op) error {
	res, ns, err := w.target(op)
	if err != nil {
		return err
	}
	ctx := context.Background()
	rc := w.srv.Resource(res.GVR)
	if ns != "" {
		rc = rc.Namespace(ns)
	}
	switch op.Kind {
	case OpCreate:
		// The apiserver copies what it is given and keeps none of it, so the op's content needs
		// no deep copy here: only the maps the setters below write into (the top level and
		// metadata) are new, and the op keeps its own.
		top := maps.Clone(op.Content)
		if top == nil {
			top = map[string]any{}
		}
		if md, ok := top["metadata"].(map[string]any); ok {
			top["metadata"] = maps.Clone(md)
		}
		u := &unstructured.Unstructured{Object: top}
		u.SetGroupVersionKind(res.GVR.GroupVersion().WithKind(res.Kind))
		u.SetName(op.Name)
		u.SetGenerateName(op.GenerateName)
		u.SetNamespace(ns)
		if len(op.Labels) > 0 {
			u.SetLabels(op.Labels)
		}
		if len(op.Annotations) > 0 {
			u.SetAnnotations(op.Annotations)
		}
		if len(op.Finalizers) > 0 {
			u.SetFinalizers(op.Finalizers)
		}
		_, _, err = rc.CreateRV(ctx, u, metav1.CreateOptions{}) // the answer is not needed: no copy of it
	case OpUpdate:
		var u *unstructured.Unstructured
		u, err = rc.Get(ctx, op.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for k, v := range op.Content {
			u.Object[k] = runtime.DeepCopyJSONValue(v)
		}
		mergeMetadataStrings(u, "labels", op.Labels, false)
		mergeMetadataStrings(u, "annotations", op.Annotations, true)
		if op.Finalizers != nil {
			u.SetFinalizers(op.Finalizers)
		}
		_, err = rc.UpdateRV(ctx, u, metav1.UpdateOptions{})
	case OpPatch:
		_, err = rc.Patch(ctx, op.Name, op.PatchType, []byte(op.Patch), metav1.PatchOptions{})
	case OpDelete:
		var opts metav1.DeleteOptions
		if op.Propagation != "" {
			opts.PropagationPolicy = &op.Propagation
		}
		err = rc.Delete(ctx, op.Name, opts)
	}
	return err
}

// mergeMetadataStrings sets u's metadata.<field> (labels or annotations) to its current entries with
// add merged in and, if bumpGen, the "sim/gen" annotation counted up (from 0 when absent or not a
// number). The result is exactly that of u.Get<Field>, merging into the map it returns (a new
// one when nil) and u.Set<Field>: nil values read as "", an unreadable map (a value neither a
// string nor nil, or not a map) counts as empty, and nothing is set when metadata is not a map.
// It builds the one map the object keeps, where the getter and setter pair builds two.
func mergeMetadataStrings(u *unstructured.Unstructured, field string, add map[string]string, bumpGen bool) {
	var old map[string]any
	md, hasMD := u.Object["metadata"]
	mdMap, mdOK := md.(map[string]any)
	if mdOK {
		old, _ = mdMap[field].(map[string]any)
		for _, v := range old {
			if _, isString := v.(string); !isString && v != nil {
				old = nil // the getter reports an error and returns nil
				break
			}
		}
	}
	m := make(map[string]any, len(old)+len(add)+1)
	for k, v := range old {
		if v == nil {
			v = "" // the getter reads nil as ""
		}
		m[k] = v // the string as it is, already boxed: no new allocation per entry
	}
	for k, v := range add {
		m[k] = v
	}
	if bumpGen {
		g, _ := m["sim/gen"].(string)
		gen, _ := strconv.Atoi(g)
		m["sim/gen"] = strconv.Itoa(gen + 1)
	}
	switch {
	case !hasMD:
		u.Object["metadata"] = map[string]any{field: m}
	case mdOK:
		mdMap[field] = m
	}
	// metadata present but not a map: the setter fails, and the getter-setter pair sets nothing.
}

// statusError is the apiserver error for an injected failure of HTTP code.
func statusError(code int32) error {
	switch code {
	case 429:
		return apierrors.NewTooManyRequests("injected", 1)
	case 500:
		return apierrors.NewInternalError(errors.New("injected"))
	}
	return fakeapi.NewWatchError(code)
}

// statusCause is what an apiserver error's Details.Causes say that its message does not (a
// failed JSON patch's 422 says only "the server rejected our request"), "" when nothing.
func statusCause(err error) string {
	var api apierrors.APIStatus
	if !errors.As(err, &api) || api.Status().Details == nil {
		return ""
	}
	msg := api.Status().Message
	var out []string
	for _, c := range api.Status().Details.Causes {
		if c.Message != "" && !strings.Contains(msg, c.Message) {
			out = append(out, c.Message)
		}
	}
	return strings.Join(out, "; ")
}
