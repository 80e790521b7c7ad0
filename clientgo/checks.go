package clientgo

import (
	"fmt"
	"net/http"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Write is one write of the controller as the world served it: the request, the answer, and
// the object at the apiserver just before and just after (nil where it did not exist).
type Write struct {
	// Method and Path are the request's ("PUT", "/apis/apps/v1/namespaces/default/deployments/web");
	// Body is what it sent, Code the apiserver's answer.
	Method, Path string
	Body         []byte
	Code         int
	// Resource, Namespace and Name name the object written ("" Name for a collection's
	// DELETE, or a create the apiserver refused).
	Resource        schema.GroupVersionResource
	Namespace, Name string
	Before, After   *unstructured.Unstructured
}

func (w Write) String() string {
	return fmt.Sprintf("%s %s (%d)", w.Method, w.Path, w.Code)
}

// checks are the user's checks while the controller runs (Checks.Invariant and OnWrite).
type checks struct {
	b         *bubble
	invariant func(*fakeapi.Server) error
	onWrite   func(Write) error
	repro     string
}

// objectPath parses a path naming one object (or its subresource): the collection, then the
// name.
func objectPath(path string) (gvr schema.GroupVersionResource, ns, name string, ok bool) {
	var buf [maxPathSegments]string
	parts := pathSegments(path, &buf)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gvr.Group, gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return gvr, "", "", false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" && len(parts) != 2 {
		ns, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		gvr.Resource = parts[0]
		return gvr, ns, "", true
	case 2, 3:
		gvr.Resource, name = parts[0], parts[1]
		return gvr, ns, name, true
	}
	return gvr, "", "", false
}

// current is the object at the apiserver now, read without a request (Snapshot changes
// nothing); nil if absent or unreadable.
func current(srv *fakeapi.Server, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	if name == "" {
		return nil
	}
	l, err := srv.Snapshot(gvr, ns, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil || len(l.Items) != 1 {
		return nil
	}
	return &l.Items[0]
}

// isWrite reports whether a request changes the apiserver's objects.
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// checkWrite runs Checks.OnWrite on a write served inside a step; a violation ends the run at
// this step.
func (c *checks) checkWrite(w Write) {
	b := c.b
	if b.checks.onWrite == nil {
		return
	}
	if err := b.checks.onWrite(w); err != nil {
		fields := []sim.Field{sim.F("request", w.String()), sim.F("error", err.Error())}
		if w.Name != "" {
			key := w.Name
			if w.Namespace != "" {
				key = w.Namespace + "/" + key
			}
			fields = append([]sim.Field{sim.F("key", key)}, fields...)
		}
		b.s.Emit(ControllerActor, "write-violation", fields...)
		// A violation about the object written: its history (the apiserver's writes of it, the
		// controller's watch events and requests) is in the failure.
		b.fail(b.violation(OracleControllerWrite, fmt.Sprintf("clientgo: the controller's write %v breaks Checks.OnWrite: %v", w, err)))
	}
}

// OracleControllerWrite names Checks.OnWrite's violations.
const OracleControllerWrite = "controller-write"

// violation is the world's Violation of oracle at the last trace event (the one just emitted),
// with the seed, the replay line and, when the event names an object, its history.
func (b *bubble) violation(oracle, msg string) *world.Violation {
	e := sim.Event{Step: b.s.StepCount(), Time: b.s.Now(), Actor: ControllerActor, Kind: oracle}
	if evs := b.s.Trace().Events(); len(evs) > 0 {
		e = evs[len(evs)-1]
	}
	return world.NewViolation(b.s, oracle, msg, e, world.DefaultViolationWindow)
}

// checkStep runs Checks.Invariant after a step; a violation ends the run at this step.
func (c *checks) checkStep() {
	b := c.b
	if b.checks.invariant == nil {
		return
	}
	if err := b.checks.invariant(b.w.Server()); err != nil {
		b.s.Emit(ControllerActor, "invariant-violation", sim.F("error", err.Error()))
		b.fail(fmt.Errorf("clientgo: Checks.Invariant broken after step %d at %s: %v (%s)", b.s.StepCount(), sim.FormatSimTime(b.s.Now()), err, b.checks.repro))
	}
}
