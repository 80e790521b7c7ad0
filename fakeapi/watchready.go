package fakeapi

// OnReady installs fn, which the server calls whenever [Watcher.Ready] may have turned true:
// every time an event joins the watch's buffer (a change in scope, a bookmark, the initial
// events, a duplicated event) and when the watch closes. Ready turns false only through
// [Watcher.Next], so a driver that asks Ready again after each fn call and after each of its
// own Next calls never misses a change; that is how the simulator asks the watcher only when its
// answer may have moved instead of at every step.
//
// fn runs with the server's lock held, on the goroutine that changed the watch (whoever wrote,
// advanced the clock or injected the fault): it must be quick and must not call the server.
// nil removes it. The ResultChan pump is woken as before, independently of fn.
func (w *Watcher) OnReady(fn func()) {
	w.srv.mu.Lock() // wiring only: the server's state, and so its epoch, stay as they are
	defer w.srv.mu.Unlock()
	w.onReady = fn
}
