package clientgo

import (
	"context"
	"sync/atomic"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"github.com/informersim/informersim/clientgo/internal/introspect"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientfeatures "k8s.io/client-go/features"
)

// What client-go decides from process-wide state, which no seed reaches, and the harness fixes
// while runs are going on in the process (outside runs, everything is as before).
//
// Jitter: client-go's backoffs (a reflector's wait before it lists again, wait.JitterUntil)
// take their jitter from wait.Jitter, which draws from the process-wide math/rand through the
// package variable wait.jitterRand, there so that tests can fix it (introspect.SetWaitJitterRand). A relist at a jittered
// instant would move every later step of the world: during runs the jitter is the middle of its
// range.
//
// Watch-list: a reflector that starts with the streaming watch-list (client-go's WatchListClient
// feature, on by default) keeps the initial objects in a temporary store, a Go map, and hands
// them to the informer's handlers in the map's iteration order, which the Go runtime randomises
// on every run: the handlers' order, the workqueue's, then the controller's writes differ from
// run to run of one seed. During runs whose Config.WatchList is false (the default), the feature
// reads as off, so reflectors start with a LIST, whose items the world orders. A run with
// WatchList counts the watch-list starts of two objects or more (Report.Diagnostics.UnorderedBatches).

// Error handlers: utilruntime.HandleError's default handlers end with a 1ms backoff that keeps
// the wall-clock time of the last error in a global, which a bubble's clock (back at
// 2000-01-01) would turn into a sleep of decades. During runs errors are only logged. The
// handlers are wrapped once, at init, so that no run replaces a global another reads: runs of
// one process go in parallel with no lock between them.

// runsActive counts the runs going on in the process; listWatchRuns those among them that turn
// the watch-list off.
var runsActive, listWatchRuns atomic.Int64

// fixedJitter is the fraction of its range every jitter takes during a run.
const fixedJitter = 0.5

// harnessGates are client-go's feature gates with WatchListClient off during list-watch runs.
type harnessGates struct{ clientfeatures.Gates }

func (g harnessGates) Enabled(key clientfeatures.Feature) bool {
	if key == clientfeatures.WatchListClient && listWatchRuns.Load() > 0 {
		return false
	}
	return g.Gates.Enabled(key)
}

func init() {
	drawn := introspect.WaitJitterRand()
	introspect.SetWaitJitterRand(func() float64 {
		if runsActive.Load() > 0 {
			return fixedJitter
		}
		return drawn()
	})
	clientfeatures.ReplaceFeatureGates(harnessGates{clientfeatures.FeatureGates()})
	crhooks.Reconciled = noteReconciled
	outside := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(ctx context.Context, err error, msg string, kv ...any) {
		if runsActive.Load() > 0 {
			noteHandledError(err, kv) // a workqueue controller's failed sync (reconciles.go)
			logError(ctx, err, msg, kv...)
			return
		}
		for _, h := range outside {
			h(ctx, err, msg, kv...)
		}
	}}
}
