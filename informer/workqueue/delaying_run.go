package workqueue

import (
	"time"
)

// This file is the delaying queue's goroutine driver, the only non-test file of the package that
// starts a goroutine (the verify script allows goroutines in *_run.go files only). It does what
// a deterministic driver does by hand: wait on the clock until NextDeadline, then FireDue.

func (q *DelayingQueue[T]) startWaitingLoop() {
	go q.waitingLoop()
}

// waitingLoop is client-go's waiting goroutine: it adds due items, then sleeps until the next
// ready time, a new AddAfter, the heartbeat, or shut down.
func (q *DelayingQueue[T]) waitingLoop() {
	defer close(q.loopDone)
	for {
		select {
		case <-q.stopCh:
			return
		default:
		}
		q.FireDue()
		var readyC <-chan time.Time
		var readyTimer interface{ Stop() bool }
		if at, ok := q.NextDeadline(); ok {
			t := q.clock.NewTimer(at.Sub(q.clock.Now()))
			readyC, readyTimer = t.C(), t
		}
		heartbeat := q.clock.NewTimer(waitingLoopHeartbeat)
		select {
		case <-q.stopCh:
		case <-readyC:
		case <-q.wake:
		case <-heartbeat.C():
		}
		heartbeat.Stop()
		if readyTimer != nil {
			readyTimer.Stop()
		}
	}
}
