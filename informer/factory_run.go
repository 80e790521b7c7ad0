package informer

import (
	"context"
)

// This file is the factory's goroutine driver: Start runs each informer on a goroutine of its
// own, as client-go's factory does (informer.md §9). A step-driven factory never comes here.

// startGoroutines starts, under the factory lock, every informer not yet started, in creation
// order, each running until ctx is done; Shutdown waits for them.
func (f *sharedInformerFactory) startGoroutines(ctx context.Context) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.shuttingDown {
		return
	}
	for _, gvr := range f.order {
		if f.started[gvr] {
			continue
		}
		inf := f.informers[gvr].informer
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			inf.Run(ctx)
		}()
		f.started[gvr] = true
	}
}

// contextOf returns a context cancelled when stopCh closes or cancel is called (client-go's
// wait.ContextForChannel). The goroutine that watches stopCh exits with the context; a nil
// stopCh never closes, so it needs none.
func contextOf(stopCh <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if stopCh == nil {
		return ctx, cancel
	}
	go func() {
		select {
		case <-stopCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}
