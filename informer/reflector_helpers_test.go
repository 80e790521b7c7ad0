package informer

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

// This file holds the Reflector tests' scaffolding: a recording store, object builders and a
// harness that drives the state machine by hand on a fake clock used only as a PassiveClock.

// reflEpoch is the fixed start of every Reflector test's clock.
var reflEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

var reflPodGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// reflStore records every call the Reflector makes, one line each, and can be told to fail.
type reflStore struct {
	ops       []string
	resyncErr error
	addErr    error
}

func reflDescribe(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return m.GetName() + "@" + m.GetResourceVersion()
}

func (s *reflStore) Add(obj any) error {
	s.ops = append(s.ops, "add "+reflDescribe(obj))
	return s.addErr
}

func (s *reflStore) Update(obj any) error {
	s.ops = append(s.ops, "update "+reflDescribe(obj))
	return nil
}

func (s *reflStore) Delete(obj any) error {
	s.ops = append(s.ops, "delete "+reflDescribe(obj))
	return nil
}

func (s *reflStore) Replace(list []any, rv string) error {
	names := make([]string, len(list))
	for i, o := range list {
		names[i] = reflDescribe(o)
	}
	s.ops = append(s.ops, fmt.Sprintf("replace [%s] rv=%s", strings.Join(names, " "), rv))
	return nil
}

func (s *reflStore) Resync() error {
	s.ops = append(s.ops, "resync")
	return s.resyncErr
}

func (s *reflStore) Bookmark(rv string) error {
	s.ops = append(s.ops, "bookmark "+rv)
	return nil
}

// take returns the operations recorded since the last take.
func (s *reflStore) take() []string {
	ops := s.ops
	s.ops = nil
	return ops
}

// reflPod is an unstructured v1 Pod named name at resourceVersion rv.
func reflPod(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(reflPodGVK)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// reflList is an UnstructuredList at rv holding pods, with an optional continue token.
func reflList(rv, cont string, pods ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "PodList"})
	l.SetResourceVersion(rv)
	l.SetContinue(cont)
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

func reflEvent(t watch.EventType, obj runtime.Object) watch.Event {
	return watch.Event{Type: t, Object: obj}
}

// reflBookmark is a bookmark event at rv, as the apiserver sends it: an object of the watched
// kind carrying only the RV.
func reflBookmark(rv string) watch.Event {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(reflPodGVK)
	u.SetResourceVersion(rv)
	return watch.Event{Type: watch.Bookmark, Object: u}
}

// reflErrorEvent is a watch.Error event carrying err's Status.
func reflErrorEvent(err *apierrors.StatusError) watch.Event {
	st := err.Status()
	return watch.Event{Type: watch.Error, Object: &st}
}

// reflConnRefused is what dialing a stopped apiserver returns.
func reflConnRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func reflGone() *apierrors.StatusError {
	return apierrors.NewResourceExpired("too old resource version: 5 (9)")
}

func reflTooMany() *apierrors.StatusError { return apierrors.NewTooManyRequests("slow down", 1) }

// reflHarness drives one Reflector by hand.
type reflHarness struct {
	t       *testing.T
	clock   *testingclock.FakeClock
	store   *reflStore
	r       *Reflector
	events  []ReflectorEvent
	handled []error
}

// newReflHarness builds a Reflector over a recording store; mod, if not nil, adjusts the options
// (Clock, Rand, ExpectedType, OnEvent and WatchErrorHandler are preset).
func newReflHarness(t *testing.T, mod func(*ReflectorOptions)) *reflHarness {
	t.Helper()
	h := &reflHarness{t: t, clock: testingclock.NewFakeClock(reflEpoch), store: &reflStore{}}
	opts := ReflectorOptions{
		Name:         "test",
		ExpectedType: &unstructured.Unstructured{},
		Clock:        h.clock,
		Rand:         rand.New(rand.NewPCG(1, 2)),
		OnEvent:      func(e ReflectorEvent) { h.events = append(h.events, e) },
		OnWatchError: func(err error) { h.handled = append(h.handled, err) },
	}
	if mod != nil {
		mod(&opts)
	}
	r, err := NewReflector(h.store, opts)
	if err != nil {
		t.Fatalf("NewReflector: %v", err)
	}
	h.r = r
	return h
}

// next returns the pending request, failing the test if there is none or it has the wrong verb.
func (h *reflHarness) next(verb RequestVerb) metav1.ListOptions {
	h.t.Helper()
	req, ok := h.r.NextRequest()
	if !ok {
		h.t.Fatalf("NextRequest: got none, want a %v", verb)
	}
	if req.Verb != verb {
		h.t.Fatalf("NextRequest: got %v, want %v", req, verb)
	}
	return req.Options
}

// noRequest fails the test if a request is pending.
func (h *reflHarness) noRequest() {
	h.t.Helper()
	if req, ok := h.r.NextRequest(); ok {
		h.t.Fatalf("NextRequest: got %v, want none", req)
	}
}

// listAndWatch performs the pending LIST with the given answer and opens the following watch.
func (h *reflHarness) listAndWatch(list runtime.Object) metav1.ListOptions {
	h.t.Helper()
	h.next(RequestList)
	h.r.ListDone(list, nil)
	w := h.next(RequestWatch)
	h.r.WatchOpened(nil)
	if !h.r.Watching() {
		h.t.Fatalf("Watching after WatchOpened(nil): got false, want true")
	}
	return w
}

// advance moves the clock forward by d.
func (h *reflHarness) advance(d time.Duration) {
	h.clock.SetTime(h.clock.Now().Add(d))
}

// fireDeadline moves the clock to the Reflector's next deadline, ticks, and returns how far the
// clock moved.
func (h *reflHarness) fireDeadline() time.Duration {
	h.t.Helper()
	at, ok := h.r.NextDeadline()
	if !ok {
		h.t.Fatalf("NextDeadline: got none, want one")
	}
	d := at.Sub(h.clock.Now())
	if d < 0 {
		h.t.Fatalf("NextDeadline %v is before now %v", at, h.clock.Now())
	}
	h.clock.SetTime(at)
	h.r.Tick()
	return d
}

// kinds returns the kinds of the events reported since the last call.
func (h *reflHarness) kinds() []ReflectorEventKind {
	var ks []ReflectorEventKind
	for _, e := range h.events {
		ks = append(ks, e.Kind)
	}
	h.events = nil
	return ks
}
