package clientgo_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/sim/world"
	"k8s.io/client-go/tools/cache"
)

// lives records each life of a controller built by Constructor.New: its Env, and every delivery to a
// handler made after its life's context was cancelled (its crash).
type lives struct {
	mu    sync.Mutex
	envs  []*clientgo.Env
	late  []string // deliveries to a dead life's handler
	held  []int    // objects in the ConfigMap informer's cache when New was called
	names []string // the world names of the informers' handlers, per life
}

// restartingMirror is the mirror controller under New with crash-restarts (two drawn, one at
// 5s) and two stale reads from a second replica, 10s behind, which the harness adds to the
// one-replica cluster.
func restartingMirror(seed uint64, l *lives) clientgo.Config {
	cfg := mirrorConfig(seed, 2, nil)
	cfg.Hazards = clientgo.Hazards{Restarts: 2, RestartAt: []time.Duration{5 * time.Second}, StaleReads: 2}
	var w *world.World
	setup := cfg.Setup
	cfg.Setup = func(ww *world.World) error { w = ww; return setup(ww) }
	ctor := cfg.Controller.(clientgo.Constructor)
	newMirrorFn := ctor.New
	ctor.New = func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
		cms := env.KubeInformers.Core().V1().ConfigMaps().Informer()
		l.mu.Lock()
		life := len(l.envs)
		l.envs = append(l.envs, env)
		l.held = append(l.held, len(cms.GetStore().List()))
		l.mu.Unlock()
		// A handler of the test's own on the life's informer: it must never run once the
		// life's context is cancelled (the crash happens between steps, with the cancel).
		_, err := cms.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if ctx.Err() != nil {
					l.mu.Lock()
					l.late = append(l.late, fmt.Sprintf("life %d: add at %v", life, w.Sim().Now()))
					l.mu.Unlock()
				}
			},
			UpdateFunc: func(_, obj any) {
				if ctx.Err() != nil {
					l.mu.Lock()
					l.late = append(l.late, fmt.Sprintf("life %d: update at %v", life, w.Sim().Now()))
					l.mu.Unlock()
				}
			},
			DeleteFunc: func(obj any) {
				if ctx.Err() != nil {
					l.mu.Lock()
					l.late = append(l.late, fmt.Sprintf("life %d: delete at %v", life, w.Sim().Now()))
					l.mu.Unlock()
				}
			},
		})
		if err != nil {
			return nil, err
		}
		return newMirrorFn(ctx, env)
	}
	cfg.Controller = ctor
	return cfg
}

// Goal: a crash-restart under Constructor.New drops the controller's life whole and starts a new
// one, and the run still converges and replays. Each restart calls New again with a new Env
// whose informers are new informers of the world, empty when New gets them; the dead life's
// informers are stopped in the world (none of their handlers runs after the crash); the run
// converges; the Report counts every restart fired; the same seed gives the same trace hash.
// The stale reads armed are taken by the Env's informers' LISTs (a restarted life's first),
// over the seeds.
func TestRestartUnderNew(t *testing.T) {
	stale := 0
	for seed := uint64(1); seed <= 4; seed++ {
		var l lives
		var w *world.World
		cfg := restartingMirror(seed, &l)
		setup := cfg.Setup
		cfg.Setup = func(ww *world.World) error { w = ww; return setup(ww) }
		rep, err := clientgo.Run(t, cfg)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, rep.Failure)
		}
		var restarts clientgo.HazardCount
		for _, h := range rep.Hazards {
			switch h.Name {
			case clientgo.HazardRestart:
				restarts = h
			case clientgo.HazardStaleRead:
				stale += h.Fired
			}
		}
		for _, line := range strings.Split(rep.Trace, "\n") {
			if strings.Contains(line, "hazard-fired hazard=stale-read") && !strings.Contains(line, "informer=configmaps") {
				t.Errorf("seed %d: a stale read not taken by the Env's informer: %s", seed, line)
			}
		}
		if restarts.Armed != 3 || restarts.Fired != 3 {
			t.Errorf("seed %d: restarts fired/armed %d/%d, want 3/3", seed, restarts.Fired, restarts.Armed)
		}
		if len(l.envs) != 1+restarts.Fired {
			t.Errorf("seed %d: New was called %d times for %d restarts", seed, len(l.envs), restarts.Fired)
		}
		for i, env := range l.envs {
			if slices.Index(l.envs, env) != i || env.Client == l.envs[0].Client && i > 0 {
				t.Errorf("seed %d: life %d got an Env or clientset of an earlier life", seed, i)
			}
			if l.held[i] != 0 {
				t.Errorf("seed %d: life %d's informer held %d objects when New got it: a new process's caches are empty", seed, i, l.held[i])
			}
		}
		if len(l.late) > 0 {
			t.Errorf("seed %d: a dead life's handler ran after its crash: %v", seed, l.late)
		}
		// The world: one ConfigMap informer per life, all but the last stopped, and their
		// handlers removed.
		var names []string
		for _, n := range w.Informers() {
			names = append(names, n.Name())
			last := n.Name() == fmt.Sprintf("configmaps~%d", restarts.Fired)
			if n.Stopped() == last {
				t.Errorf("seed %d: informer %s stopped=%v", seed, n.Name(), n.Stopped())
			}
			for _, h := range n.Handlers() {
				if !last && !h.Removed() {
					t.Errorf("seed %d: handler %s of a dead life is still registered", seed, h.Name())
				}
			}
		}
		if want := []string{"configmaps", "configmaps~1", "configmaps~2", "configmaps~3"}; !slices.Equal(names, want) {
			t.Errorf("seed %d: the world's informers are %v, want %v", seed, names, want)
		}
		again, err := clientgo.Run(t, restartingMirror(seed, &lives{}))
		if err != nil {
			t.Fatalf("seed %d, second run: %v", seed, err)
		}
		if again.Hash != rep.Hash {
			t.Errorf("seed %d: trace hashes differ: %s, %s", seed, rep.Hash[:16], again.Hash[:16])
		}
		if !strings.Contains(rep.Trace, fmt.Sprintf("configmaps~%d/", restarts.Fired)) {
			t.Errorf("seed %d: the trace never names the restarted life's informer", seed)
		}
		t.Logf("%v", rep)
	}
	if stale == 0 {
		t.Error("no stale read fired over the seeds: the Env's informers' LISTs never took one")
	}
}

// unstoppable is a controller whose Run does not return when its context is cancelled.
type unstoppable struct{ never chan struct{} }

func (u unstoppable) Run(context.Context, int) error { <-u.never; return nil }

// Goal: a crashed life that never returns is named, not waited for forever: the process ends
// with a panic saying the controller crashed, did not return within the grace, the seed, and the
// goroutine's stack (its Run).
func TestRestartOfAStuckControllerIsNamed(t *testing.T) {
	if os.Getenv("CLIENTGO_STUCK_RESTART_CHILD") == "1" {
		cfg := mirrorConfig(3, 1, nil)
		cfg.Hazards = clientgo.Hazards{RestartAt: []time.Duration{2 * time.Second}}
		cfg.Controller = clientgo.Constructor{Workers: 1, New: func(ctx context.Context, env *clientgo.Env) (clientgo.Controller, error) {
			env.KubeInformers.Core().V1().ConfigMaps().Informer()
			return unstoppable{make(chan struct{})}, nil // made in the bubble: a durable wait
		}}
		cfg.Checks.Outcome = nil
		_, err := clientgo.Run(t, cfg)
		t.Fatalf("the run returned: %v", err)
	}
	failsInChild(t, "CLIENTGO_STUCK_RESTART_CHILD", "clientgo: the controller crashed at +2.000s (hazard crash-restart)",
		"has not returned within 1m0s", "seed 3; INFORMERSIM_SEED=3", "1 goroutine(s) of it", "unstoppable.Run")
}
