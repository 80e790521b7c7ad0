package clientgo

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/informersim/informersim/clientgo/internal/crhooks"
	"github.com/informersim/informersim/clientgo/internal/introspect"
)

// A run is driven by rule 1 of bubble: the world steps once every goroutine of the controller
// is durably blocked (synctest.Wait). A goroutine blocked in a way the bubble cannot see the end
// of never is: one waiting for a sync.Mutex whose holder waits for the world, one in network
// I/O (a metrics or health-probe server listening on a real address, a dial), one waiting on a
// channel made outside the run. The driver would then wait forever, and the test would hang
// until go test's timeout with a dump of every goroutine of the process. The watchdog, a
// goroutine outside the bubble on the wall clock, sees the driver blocked for stuckAfter with
// no progress and ends the process with a panic naming those goroutines, their state and
// stack, and the seed: nothing else can end a synctest.Wait.

// stuckAfter is how long (wall clock) the driver may wait for the controller's goroutines
// before the run is declared stuck. A turn takes microseconds; on a machine whose cores are
// shared by many test binaries (go test runs packages in parallel, and a CI machine may be
// slower still) a goroutine can wait seconds for a core. A false alarm ends the whole test
// binary, a real hang only waits longer: the margin is generous.
var stuckAfter = 2 * time.Minute

// listenerAfter is how long (wall clock) the driver waits with no progress before the watchdog
// looks for a goroutine of the controller accepting connections on a real address: a metrics or
// health-probe server (a kubebuilder main's default probe address is ":8081"). Such a goroutine
// never blocks durably, so the run can never go on; the watchdog ends it then, naming the fix,
// rather than after stuckAfter.
const listenerAfter = 3 * time.Second

// watchdogTick is how often the watchdog looks at the driver.
const watchdogTick = time.Second

// watchdog watches one run's driver.
type watchdog struct {
	b     atomic.Pointer[bubble]
	repro atomic.Pointer[string]
	stop  chan struct{}
}

// startWatchdog starts the watchdog; it must be called outside the bubble, whose clock stands
// still while the run is stuck.
func startWatchdog() *watchdog {
	wd := &watchdog{stop: make(chan struct{})}
	go wd.loop()
	return wd
}

func (wd *watchdog) loop() {
	tick := time.NewTicker(min(watchdogTick, stuckAfter/10))
	defer tick.Stop()
	var last int64 = -1
	var since time.Time
	looked := false // for a listener, since the driver's last progress
	for {
		select {
		case <-wd.stop:
			return
		case now := <-tick.C:
			b := wd.b.Load()
			if b == nil || !b.driverBlocked.Load() {
				last = -1
				continue
			}
			if p := b.wakes.Load(); p != last {
				last, since, looked = p, now, false
				continue
			}
			repro := ""
			if r := wd.repro.Load(); r != nil {
				repro = *r
			}
			if now.Sub(since) >= stuckAfter {
				panic(stuckReport(b.driverID, now.Sub(since), repro))
			}
			if now.Sub(since) >= listenerAfter && !looked {
				looked = true
				if l := listeners(b.driverID); len(l) > 0 {
					panic(listenerReport(l, repro))
				}
			}
		}
	}
}

// stuckReport names the goroutines of the driver's bubble that are blocked in a way the
// bubble cannot see the end of.
func stuckReport(driver uint64, waited time.Duration, repro string) string {
	var culprits []string
	for _, g := range bubbleGoroutines(driver) {
		if strings.Contains(g.state, "(durable)") {
			continue
		}
		culprits = append(culprits, fmt.Sprintf("%s\n(%s)", g.stack, why(g.state)))
	}
	msg := fmt.Sprintf("clientgo: the run is stuck (%s): the driver waited %v for the controller's goroutines to block, and %d of them are blocked in a way the run cannot see the end of, so the world can take no step:\n\n%s",
		repro, waited.Round(time.Second), len(culprits), strings.Join(culprits, "\n\n"))
	if len(culprits) == 0 {
		msg += "(none found: the bubble's goroutines are busy)"
	}
	return msg
}

// listeners are the goroutines of the driver's bubble accepting connections on a real address.
func listeners(driver uint64) []bubbleGoroutine {
	var out []bubbleGoroutine
	for _, g := range bubbleGoroutines(driver) {
		if strings.Contains(g.state, "IO wait") && strings.Contains(g.stack, "net.(*netFD).accept") {
			out = append(out, g)
		}
	}
	return out
}

// listenerReport says why a run with a listener cannot go on, and what to change.
func listenerReport(l []bubbleGoroutine, repro string) string {
	var stacks []string
	for _, g := range l {
		stacks = append(stacks, g.stack)
	}
	return fmt.Sprintf("clientgo: the run is stuck (%s): %d goroutine(s) of the controller accept connections on a real address, which the run can never see the end of, so the world can take no step. Give every server of the controller the address \"0\" (off): with controller-runtime, ctrl.Options{Metrics: metricsserver.Options{BindAddress: \"0\"}, HealthProbeBindAddress: \"0\"} (a kubebuilder main's defaults are \":8080\" and \":8081\"; set them from flags the test passes, or leave HealthProbeBindAddress empty):\n\n%s",
		repro, len(l), strings.Join(stacks, "\n\n"))
}

// bubbleGoroutine is a goroutine of the driver's bubble: its stack, and its state as its header
// says it ("chan receive (durable), synctest bubble 1").
type bubbleGoroutine struct{ stack, state string }

// bubbleGoroutines returns the goroutines of the driver's bubble but the driver and
// testing/synctest's own (the bubble's root and the test's waiter): the controller's.
func bubbleGoroutines(driver uint64) []bubbleGoroutine {
	var out []bubbleGoroutine
	introspect.AllStacks(func(all []byte) {
		introspect.BubbleStacks(all, driver, func(stack []byte, state string) bool {
			out = append(out, bubbleGoroutine{stack: strings.TrimSpace(string(stack)), state: state})
			return true
		})
	})
	return out
}

// why says what a goroutine's state means for the run.
func why(state string) string {
	switch {
	case strings.Contains(state, "IO wait"):
		server := `a metrics or health-probe server: set its address to "0"`
		if crhooks.ControllerNames == nil {
			server += `; controller-runtime's metrics server listens on :8080 unless the test imports _ "github.com/informersim/informersim/clientgo/controllerruntime"`
		}
		return "network I/O: a server listening on a real address (" + server + ") or a connection the world does not serve"
	case strings.Contains(state, "Mutex"), strings.Contains(state, "sync.Cond"), strings.Contains(state, "semacquire"):
		return "waits for a lock: a sync.Mutex's holder may be waiting for the world, and the run cannot see that it is"
	case strings.Contains(state, "chan"), strings.Contains(state, "select"):
		return "waits on a channel made outside the run, which no step of the world can fill"
	case strings.Contains(state, "syscall"):
		return "in a system call"
	}
	return "not blocked durably"
}
