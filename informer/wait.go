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
