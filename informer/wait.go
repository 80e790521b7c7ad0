package informer

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// InformerSynced reports whether an informer (or a handler registration) has synced; pass an
// informer's or a registration's HasSynced method.
type InformerSynced func() bool

// syncedPollPeriod is client-go's polling period of WaitForCacheSync (informer.md §10).
const syncedPollPeriod = 100 * time.Millisecond

// WaitForCacheSync waits until every function returns true, checking at once and then every
// 100ms (informer.md §10). It returns true when all have synced (at once with no functions) and
// false if ctx ends first. It is meant for the goroutine driver and polls on the real clock; a
// deterministic driver checks HasSynced between steps instead.
func WaitForCacheSync(ctx context.Context, cacheSyncs ...InformerSynced) bool {
	return waitForCacheSync(ctx, clock.RealClock{}, cacheSyncs...)
}

// waitForCacheSync is WaitForCacheSync on clk.
func waitForCacheSync(ctx context.Context, clk clock.WithTicker, cacheSyncs ...InformerSynced) bool {
	allSynced := func() bool {
		for _, synced := range cacheSyncs {
			if !synced() {
				return false
			}
		}
		return true
	}
	if allSynced() {
		return true
	}
	ticker := clk.NewTicker(syncedPollPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C():
			if allSynced() {
				return true
			}
		}
	}
}

// DoneChecker is something a caller can wait for without polling, such as an informer's or a
// registration's sync (informer.md §1.4, §10). Unlike [InformerSynced] it has a name that says
// what is being waited for.
type DoneChecker interface {
	// Name describes what is being waited for.
	Name() string
	// Done returns a channel that is closed when the activity has completed. It never reopens.
	Done() <-chan struct{}
}

// IsDone reports, without blocking, whether checker is done.
func IsDone(checker DoneChecker) bool {
	select {
	case <-checker.Done():
		return true
	default:
		return false
	}
}

// WaitFor waits until every checker is done, on its channel, without polling (informer.md §10).
// It returns true when all are done (at once with no checkers) and false if ctx ends first; a
// checker that is done when ctx ends still counts as done, so the answer does not depend on which
// of two ready channels a select picks. what describes the whole wait; client-go logs it and the
// names of the checkers still pending, and this package, which does not log, keeps it only for
// the signature. Unlike client-go it waits for the checkers one after another rather than on one
// goroutine each: the result is the same and it starts no goroutine.
func WaitFor(ctx context.Context, what string, checkers ...DoneChecker) bool {
	_ = what
	for _, c := range checkers {
		select {
		case <-c.Done():
		case <-ctx.Done():
			if !IsDone(c) {
				return false
			}
		}
	}
	return true
}
