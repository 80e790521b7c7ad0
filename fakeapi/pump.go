package fakeapi

import (
	"context"
	"sync"
	"time"

	"github.com/informersim/informersim/internal/invariant"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// pump is the channel adapter of one watch: the only goroutine in this package. It serves
// concurrent consumers such as client-go's reflector and is never on the simulation path.
type pump struct {
	out      chan watch.Event
	wake     chan struct{} // buffered 1: "the watch changed"
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// ResultChan returns the channel of events, starting the adapter goroutine on first use. The
// channel is closed when the watch ends and its last event was received, or after Stop. Once
// ResultChan was called, Next must not be. ResultChan and Stop make *Watcher a watch.Interface.
func (w *Watcher) ResultChan() <-chan watch.Event {
	return w.startPump(context.Background())
}

func (w *Watcher) startPump(ctx context.Context) <-chan watch.Event {
	s := w.srv
	s.lock()
	defer s.mu.Unlock()
	if w.pump != nil {
		return w.pump.out
	}
	p := &pump{
		out:  make(chan watch.Event),
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	w.pump = p
	go w.runPump(ctx, p) // determinism:allow channel adapter for concurrent consumers (client-go), never on the sim path
	return p.out
}

// runPump delivers events until the watch is done or stopped. When idle it waits for a change
// of the watch, for ctx, for Stop, or, when the clock can make timers, for the server's next
// deadline, at which point it calls Advance on the driver's behalf.
func (w *Watcher) runPump(ctx context.Context, p *pump) {
	defer close(p.done)
	defer close(p.out)
	s := w.srv
	timers, _ := s.clk.(clock.Clock)
	for {
		s.lock()
		s.advance_locked()
		ev, ok := w.next_locked()
		finished := !ok && w.closed
		var timer clock.Timer
		var fire <-chan time.Time
		if !ok && !finished && timers != nil {
			if at, has := s.nextDeadline_locked(); has {
				timer = timers.NewTimer(max(at.Sub(timers.Now()), 0))
				fire = timer.C()
			}
		}
		s.mu.Unlock()
		if finished {
			return
		}
		if ok {
			select {
			case p.out <- ev:
				continue
			case <-p.stop:
				return
			case <-ctx.Done():
				w.closeFromPump()
				return
			}
		}
		select {
		case <-p.wake:
		case <-fire:
		case <-p.stop:
		case <-ctx.Done():
			w.closeFromPump()
		}
		if timer != nil {
			timer.Stop()
		}
		select {
		case <-p.stop:
			return
		default:
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (w *Watcher) closeFromPump() {
	w.srv.lock()
	defer w.srv.mu.Unlock()
	invariant.Check(w.pump != nil, "fakeapi: pump without adapter")
	w.close_locked(CloseStopped, nil)
}
