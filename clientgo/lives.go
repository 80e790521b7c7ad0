package clientgo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/informersim/informersim/sim"
	"k8s.io/client-go/rest"
)

// lives are the controller's lives in a run: the first, then one after each crash-restart
// (Hazards.Restarts). The driver alone uses it, between steps: a crash cancels the running life
// and cuts its connections; once every goroutine of the crashed life has returned, the next life
// starts, as a process started afresh would, with empty caches and no memory.
type lives struct {
	c       *cluster
	program Program
	// all are every life started, in order; cur the one running; crashed those crashed whose
	// goroutines have not all returned yet (the next life waits for them).
	all     []*incarnation
	cur     *incarnation
	crashed []*incarnation
	// names are controller-runtime's controller names taken before the run (controllernames.go):
	// those taken during it are given back when it ends, and when a crashed life has returned.
	names map[string]bool
}

// startLives starts the controller's first life and makes the driver's turns restart it.
func startLives(c *cluster, p Program) (*lives, error) {
	l := &lives{c: c, program: p, names: controllerNames()}
	cur, err := l.start(c.tr)
	if err != nil {
		releaseControllerNames(l.names)
		return nil, err
	}
	l.cur = cur
	c.b.onTurn = l.onTurn
	return l, nil
}

// start starts a life whose requests go over t: its Env (under a Constructor), then its
// goroutine, which runs the program until it returns.
func (l *lives) start(t *transport) (*incarnation, error) {
	b := l.c.b
	ctx, cancel := context.WithCancel(context.Background())
	inc := &incarnation{cancel: cancel, done: make(chan struct{}), tr: t}
	if ctor, ok := l.program.(Constructor); ok {
		env, err := newEnv(l.c.w, b, ctor.Scheme, l.c.restCfg, t, len(l.all))
		if err != nil {
			cancel()
			return nil, err
		}
		inc.env = env
		b.hz.env = env
	}
	l.all = append(l.all, inc)
	b.controllerWoken()
	go func() {
		defer close(inc.done)
		if err := live(ctx, l.program, l.c.restCfg, t, inc.env); err != nil && ctx.Err() == nil {
			inc.err = err
		}
	}()
	return inc, nil
}

// onTurn runs before each turn of the driver: it restarts the controller once its crashed life
// is gone, or crashes it when a restart hazard is due.
func (l *lives) onTurn() {
	b := l.c.b
	if len(l.crashed) == 0 && !b.hz.restartDue {
		return
	}
	// What follows depends on how far the controller's goroutines got: let them all block
	// first, as a turn does before its step, so a replay crashes and restarts the controller at
	// the same point of its run.
	b.quiesce()
	if len(l.crashed) > 0 {
		l.restart()
		return
	}
	b.hz.restartDue = false
	l.crash()
}

// crash ends the running life as a crashed process ends: its context cancelled, its connections
// refused, its watches ended, its informers stopped in the world.
func (l *lives) crash() {
	b, cur := l.c.b, l.cur
	cur.tr.crashed.Store(true)
	cur.crashedAt = b.s.Now()
	cur.cancel()
	b.controllerWoken()
	b.endStreamsOf(cur.tr)
	if cur.env != nil {
		// The process's informers die with it: stopped in the world, their handlers removed
		// with what they had buffered, their watches closed.
		cur.env.drop()
	}
	// A new process has empty caches: the world's view of them starts afresh.
	b.views, b.listedAt = nil, nil
	b.s.Emit(ControllerActor, "crash", sim.F("hazard", HazardRestart))
	l.crashed = append(l.crashed, cur)
}

// restart starts the next life once the first crashed one is gone; a crashed life whose
// goroutines have not all returned restartGrace after its crash ends the process, naming them.
func (l *lives) restart() {
	b, first := l.c.b, l.crashed[0]
	if !first.gone() {
		if since := b.s.Now() - first.crashedAt; since >= restartGrace {
			panic(stuckRestartReport(b.driverID, first, since, b.checks.repro))
		}
		return
	}
	l.crashed = l.crashed[1:]
	releaseControllerNames(l.names)
	base := l.c.tr
	next, err := l.start(&transport{b: b, host: base.host, handler: base.handler, latency: base.latency})
	if err != nil {
		b.fail(fmt.Errorf("clientgo: restarting the controller: %w", err))
		return
	}
	l.cur = next
	b.hz.fire(HazardRestart, sim.F("life", strconv.Itoa(len(l.all)-1)))
}

// exited reports whether the controller returned on its own: no crashed life is pending and the
// running one is over.
func (l *lives) exited() bool { return len(l.crashed) == 0 && l.cur.exited() }

// stop ends every life once the driver is done: it cancels them, lets their goroutines run to
// their end and shuts their factories down. It returns the running life's error, and whether
// that life had returned before the run ended.
func (l *lives) stop() (err error, early bool) {
	early = l.exited()
	b := l.c.b
	b.onTurn = nil
	l.cur.cancel()
	for _, inc := range l.crashed {
		inc.cancel()
	}
	b.shutdown(append(l.crashed, l.cur))
	for _, inc := range l.all {
		if inc.env != nil {
			for _, f := range inc.env.factories {
				f.Shutdown()
			}
		}
	}
	return l.cur.err, early
}

// releaseNames gives back the controller names taken during the run.
func (l *lives) releaseNames() { releaseControllerNames(l.names) }

// live is one life of the controller, on a goroutine of its own: its main with a *rest.Config
// sending over t, or its constructor on env and its Run. It returns when the controller does.
func live(ctx context.Context, p Program, restCfg *rest.Config, t *transport, env *Env) error {
	switch p := p.(type) {
	case Main:
		c := rest.CopyConfig(restCfg)
		c.Transport = t
		if err := p(ctx, c); err != nil {
			err = fmt.Errorf("clientgo: the controller's main: %w", err)
			if hint := nameCollisionHint(); hint != "" && nameCollision(err) {
				err = fmt.Errorf("%w (%s)", err, hint)
			}
			return err
		}
	case Constructor:
		c, err := p.New(ctx, env)
		if err != nil {
			return fmt.Errorf("clientgo: the controller's constructor: %w", err)
		}
		if c == nil {
			return errors.New("clientgo: the controller's constructor returned nil")
		}
		for _, f := range env.factories {
			f.Start(ctx.Done())
		}
		if err := c.Run(ctx, p.Workers); err != nil {
			return fmt.Errorf("clientgo: the controller's Run: %w", err)
		}
	}
	return nil
}

// incarnation is one life of the controller: from its main's (or constructor's) call to its
// return.
type incarnation struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when it returned
	err    error         // its error, read once done is closed
	tr     *transport
	// env is the life's Env (Constructor.New), nil under a Main.
	env *Env
	// crashedAt is when a restart hazard crashed it.
	crashedAt time.Duration
}

// gone reports whether a crashed life is over: its main (or constructor and Run) returned, and
// so did the goroutines its Env's factories started (Start runs each informer in one).
func (inc *incarnation) gone() bool {
	if !inc.exited() {
		return false
	}
	if inc.env != nil {
		for _, f := range inc.env.factories {
			if f.running.Load() > 0 {
				return false
			}
		}
	}
	return true
}

func (inc *incarnation) exited() bool {
	select {
	case <-inc.done:
		return true
	default:
		return false
	}
}
