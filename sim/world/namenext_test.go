package world

import (
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/informer"
)

// A controller registers on the informer itself (not through AddHandler): NameNextHandler gives
// that registration a name and a CallDuration, so it narrates as "inf1/ctrl" and is slow; the
// registration after it is named h<ID> again.
func TestNameNextHandlerNamesAControllersOwnRegistration(t *testing.T) {
	w := newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.NameNextHandler("ctrl", HandlerOptions{CallDuration: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	if _, err := n.SharedIndexInformer().AddEventHandler(informer.ResourceEventHandlerFuncs{AddFunc: func(any) { calls++ }}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.SharedIndexInformer().AddEventHandler(informer.ResourceEventHandlerFuncs{}); err != nil {
		t.Fatal(err)
	}
	w.Settle()
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"), create(configMaps, "c"))
	mustConverge(t, w)
	hs := n.Handlers()
	if len(hs) != 2 || hs[0].Name() != "ctrl" || hs[0].Actor() != "inf1/ctrl" || !strings.HasPrefix(hs[1].Name(), "h") {
		t.Fatalf("handlers %v, want inf1/ctrl then an h<ID>", hs)
	}
	if calls != 3 {
		t.Errorf("the controller's handler was called %d times, want 3", calls)
	}
	// The calls took 100ms each: the handler's OnAdd events are 100ms apart at least.
	var at []time.Duration
	for _, e := range w.Sim().Trace().Events() {
		if e.Actor == "inf1/ctrl" && e.Kind == "OnAdd" {
			at = append(at, e.Time)
		}
	}
	if len(at) != 3 || at[1]-at[0] < 100*time.Millisecond || at[2]-at[1] < 100*time.Millisecond {
		t.Errorf("inf1/ctrl's OnAdd at %v, want three calls 100ms apart at least", at)
	}
}

func TestNameNextHandlerRefusesBadInput(t *testing.T) {
	w := newTraceWorld(t, 1)
	n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps})
	if err != nil {
		t.Fatal(err)
	}
	mustAddHandler(t, w, n, "taken", useInformerResync)
	period := time.Minute
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{`NameNextHandler("")`, n.NameNextHandler("", HandlerOptions{}), `invalid name ""`},
		{`NameNextHandler("a b")`, n.NameNextHandler("a b", HandlerOptions{}), `invalid name "a b"`},
		{`NameNextHandler("taken")`, n.NameNextHandler("taken", HandlerOptions{}), `actor name "inf1/taken" is already in use`},
		{`NameNextHandler(resync)`, n.NameNextHandler("x", HandlerOptions{ResyncPeriod: &period}), "ResyncPeriod is set by the registration's own call"},
		{`NameNextHandler(-1s)`, n.NameNextHandler("x", HandlerOptions{CallDuration: -time.Second}), "negative CallDuration"},
		{`NameNextHandler twice`, errAfter(n.NameNextHandler("first", HandlerOptions{}), n.NameNextHandler("second", HandlerOptions{})), `is named "first" already`},
		{`AddHandler(announced name)`, errOf(w.AddHandler(n, "first", nil, HandlerOptions{})), "announced for the next direct registration"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "world: ") || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s = %v, want an error containing %q", c.call, c.err, c.want)
		}
	}
	// An AddHandler in between leaves the announcement for the direct registration.
	mustAddHandler(t, w, n, "other", useInformerResync)
	if _, err := n.SharedIndexInformer().AddEventHandler(informer.ResourceEventHandlerFuncs{}); err != nil {
		t.Fatal(err)
	}
	w.Settle()
	if hs := n.Handlers(); hs[len(hs)-1].Name() != "first" {
		t.Errorf("the direct registration is named %q, want first", hs[len(hs)-1].Name())
	}
}

// errAfter returns second when first succeeded, and first's error otherwise.
func errAfter(first, second error) error {
	if first != nil {
		return first
	}
	return second
}
