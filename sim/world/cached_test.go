package world

import (
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
	"github.com/informersim/informersim/sim"
)

// Goal: the reflector, watch and queue actors of an informer are cached actors whose wakes the
// thorough checks verify: a run in which every wake happens passes them, and a run in which one
// wake is missing fails at the first step whose cached answer is stale, naming the actor. Method:
// one informer with a handler, watching and quiet; then, from outside any step, a create (the
// apiserver's watcher wakes the watch actor; the event reaching the Reflector wakes the queue
// actor) and a watch closed by a fault (its end reaching the Reflector wakes the reflector actor,
// which asks for a new WATCH). Each case plants one missing wake: the watcher's OnReady callback
// removed, or the world's waker of the queue or reflector actor replaced by the zero Waker,
// which does nothing. The control (no plant) converges with the checks on.
func TestInformerActorsMissedWakesAreCaught(t *testing.T) {
	if !invariant.Thorough() {
		t.Skip("the thorough checks are off (a benchmark run)")
	}
	cases := []struct {
		name  string
		plant func(n *Informer)
		want  string // "" for the control
	}{
		{"control", func(*Informer) {}, ""},
		{"watcher without OnReady", func(n *Informer) { n.net.stream.w.OnReady(nil) }, "cached actor inf/watch offers [pull], but its cache holds []"},
		{"queue never woken", func(n *Informer) { n.queueWaker = sim.Waker{} }, "cached actor inf/queue offers [process], but its cache holds []"},
		{"reflector never woken", func(n *Informer) { n.reflectorWaker = sim.Waker{} }, "cached actor inf/reflector offers [request], but its cache holds []"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, n, hs := convergedPodsWorld(t, 7, "h")
			h := hs[0]
			c.plant(n)
			got := runRecovering(func() error {
				if err := w.Apply(Op{Kind: OpCreate, Resource: pods, Namespace: "default", Name: "p1"}); err != nil {
					return err
				}
				if err := w.Sim().RunUntil(w.Quiet, time.Minute); err != nil {
					return err
				}
				if err := w.Server().Faults().CloseWatch(n.net.stream.w.ID(), nil); err != nil {
					return err
				}
				w.Settle()
				return w.RunUntilConverged(time.Minute)
			})
			switch {
			case c.want == "" && got != "":
				t.Fatalf("control run failed: %s", got)
			case c.want == "" && h.Deliveries().Total() != 1:
				t.Fatalf("control run: the handler saw %d notifications, want the add of p1", h.Deliveries().Total())
			case c.want != "" && !strings.Contains(got, c.want):
				t.Fatalf("got %q, want the missed wake reported: %q", got, c.want)
			}
		})
	}
}

// runRecovering runs fn and returns its error's text, or the text of the panic it raised: the
// thorough checks panic with an invariant.Violation from the engine's collect, outside any
// action, so RunUntil does not turn it into an error.
func runRecovering(fn func() error) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			v, ok := p.(invariant.Violation)
			if !ok {
				panic(p)
			}
			msg = v.Error()
		}
	}()
	if err := fn(); err != nil {
		return err.Error()
	}
	return ""
}

// Goal: a handler's mirror of its buffered notifications (Handler.buffered, the key number of
// each, in order) is checked at every delivery: a number that is not the delivered key's fails
// the run. Method: two pods distributed to a handler; before the first is delivered, its key
// number in the mirror is replaced by the other pod's; the delivery must be refused, naming it.
func TestHandlerKeyMirrorIsChecked(t *testing.T) {
	w, _, hs := convergedPodsWorld(t, 3, "h")
	h := hs[0]
	for _, name := range []string{"p1", "p2"} {
		if err := w.Apply(Op{Kind: OpCreate, Resource: pods, Namespace: "default", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sim().RunUntil(func() bool { return h.buffered.len() == 2 }, time.Minute); err != nil {
		t.Fatal(err)
	}
	q := &h.buffered
	q.items[q.head].key = q.items[q.head+1].key // the first delivery now claims the second pod's key
	err := w.Sim().RunUntil(w.Quiet, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "delivered under key number") {
		t.Fatalf("got %v, want the delivery refused for its key number", err)
	}
}

// Goal: the world keeps the apiserver's next deadline between steps only while it cannot have
// changed, and the thorough checks catch a kept answer that went stale. Method: a world with a
// watching informer; a create from outside a step (the apiserver's OnStateChange observer marks
// the answer stale) converges with the checks on; then the kept answer is planted wrong (an hour
// later, not stale) and the next settle at the same sim time must fail naming the unseen change.
func TestKeptApiserverDeadlineIsChecked(t *testing.T) {
	if !invariant.Thorough() {
		t.Skip("the thorough checks are off (a benchmark run)")
	}
	w, _, _ := convergedPodsWorld(t, 5)
	if err := w.Apply(Op{Kind: OpCreate, Resource: pods, Namespace: "default", Name: "p1"}); err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatalf("with every change seen: %v", err)
	}
	w.srvNext.at = w.srvNext.at.Add(time.Hour)
	w.srvNext.stale, w.srvNext.now = false, w.Sim().Now()
	got := runRecovering(func() error { w.Settle(); return nil }) // at the same sim time
	if !strings.Contains(got, "a state change went unseen") {
		t.Fatalf("got %q, want the stale kept deadline reported", got)
	}
}

// convergedPodsWorld is a world of seed seed with one informer "inf" of pods in "default",
// handlers named as given (recording only), started and run until converged.
func convergedPodsWorld(t *testing.T, seed uint64, handlers ...string) (*World, *Informer, []*Handler) {
	t.Helper()
	w, err := NewFromConfig(sim.Config{Seed: seed}, fakeapi.Config{}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.AddInformer("inf", InformerSpec{Resource: pods, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	var hs []*Handler
	for _, name := range handlers {
		h, err := w.AddHandler(n, name, nil, HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.RunUntilConverged(time.Minute); err != nil {
		t.Fatal(err)
	}
	return w, n, hs
}
