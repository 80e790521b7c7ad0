package informer

import (
	"strings"
	"testing"
	"time"
)

// Goal: a nil handler is refused where it is registered, by each registration method, with an
// error that says so, rather than taken and panicking at the first notification. The informer
// stays usable: a real handler registered afterwards is the only registration.
func TestAddEventHandlerRefusesNil(t *testing.T) {
	e := newInfStep(t, SharedIndexInformerOptions{})
	period := time.Minute
	for _, c := range []struct {
		call string
		err  error
	}{
		{"AddEventHandler(nil)", errOf(e.inf.AddEventHandler(nil))},
		{"AddEventHandlerWithResyncPeriod(nil, 1m)", errOf(e.inf.AddEventHandlerWithResyncPeriod(nil, period))},
		{"AddEventHandlerWithOptions(nil, {})", errOf(e.inf.AddEventHandlerWithOptions(nil, HandlerOptions{ResyncPeriod: &period}))},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), "nil handler") {
			t.Errorf("%s = %v, want an error naming the nil handler", c.call, c.err)
		}
	}
	rec := &infRec{}
	if _, err := e.inf.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	e.lw.set("p1")
	e.st.Start()
	e.quiesce()
	if len(rec.calls) != 1 {
		t.Errorf("the handler got %v, want one add (the refused registrations must not count)", rec.calls)
	}
}

func errOf[T any](_ T, err error) error { return err }
