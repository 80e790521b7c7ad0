package clientgo

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing/synctest"
	"time"

	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/kube/webhooks"
	"github.com/informersim/informersim/sim/world"
)

// Admission webhooks in a run (Cluster.Webhooks): the REST front runs kube-apiserver's own
// webhook plugins (kube/webhooks.InProcess) in the step that serves a write of the controller,
// and every call they make to a webhook comes here. The webhook's server is the user's
// http.Handler, called in process: a real HTTPS listener cannot be in the run (its accepting
// goroutine is never durably blocked, so the world could take no step: the watchdog names such
// listeners), and a connection to one outside would leave client-go's connection goroutines
// in network I/O inside the bubble, with the same effect. What the call meets is the world's
// to decide (world.World.WebhookCall): a delay drawn from the seed, and the webhook faults
// (slow-webhook, refuse-webhook, fail-webhook ops: a timeout when the delay reaches the
// webhook's timeoutSeconds, a refused connection, an HTTP error from its server), so they are
// faults of the world's table like any other, and the plugins answer them as kube-apiserver
// does (failurePolicy Fail: the write refused with kube-apiserver's message; Ignore: admitted).
//
// Ordering: kube-apiserver calls the validating webhooks of a write in parallel, one goroutine
// each, and answers with the first refusal to arrive. The calls of one write meet here: the
// first to arrive starts a coordinator, which waits until every goroutine of the bubble is
// blocked (synctest.Wait: the driver waits in the plugin for the calls, the controller's
// goroutines for the step), so that every call of the round is in; it then asks the world
// about them in the order of their webhooks' names, and lets them go one at a time in the order
// their answers arrive (the delay, or the timeout for a call timed out; then the name), each
// run to its end before the next. The first refusal is then the first to arrive, as in
// kube-apiserver, and the same in every run of a seed. The mutating webhooks, called one after
// another, make a round each.
//
// Time: the write is served at its step's instant; what the webhooks took (the longest call of
// each round, rounds one after another) is added to the latency of the controller's response,
// so a slow webhook makes a slow write as the controller sees it. The object is stored at the
// step's instant, not when the last webhook answered: a watcher sees a write admitted after a
// slow webhook earlier than it would on kube-apiserver.

// webhookCalls are a run's calls to admission webhooks.
type webhookCalls struct {
	w        *world.World
	handlers map[string]http.Handler // by the host[:port] of the webhook's URL

	fail func(error) // ends the run (bubble.fail)

	mu           sync.Mutex
	pending      []*webhookCall
	coordinating bool
	// handling is set while a handler runs off the driver (a validating webhook's goroutine):
	// a call it makes to the world could only be served after the step that is waiting for it.
	handling atomic.Bool
}

// webhookCall is one call, waiting for the coordinator to let it go with its answer.
type webhookCall struct {
	name   string
	req    *http.Request
	answer chan world.WebhookAnswer
	// done is closed by the call when it is over; delay is the time it took the webhook.
	done  chan struct{}
	delay time.Duration
	// timeout is the call's timeoutSeconds, read from the ?timeout= the plugin set.
	timeout time.Duration
}

// writeDelay is what the webhooks of one write took, carried by the write's request context
// from the harness's transport to the calls.
type writeDelay struct {
	mu    sync.Mutex
	total time.Duration
}

type writeDelayKey struct{}

// writeContext is the context of req for the front: for a write in a run with webhooks, one
// carrying the writeDelay its webhooks' calls add to (nil otherwise, which adds nothing).
func (c *webhookCalls) writeContext(req *http.Request) (context.Context, *writeDelay) {
	if c == nil || !isWrite(req.Method) {
		return req.Context(), nil
	}
	d := &writeDelay{}
	return context.WithValue(req.Context(), writeDelayKey{}, d), d
}

func (d *writeDelay) add(x time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.total += x
}

func (d *writeDelay) get() time.Duration {
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total
}

// installWebhooks makes the front run the webhook plugins (over the world's apiserver) with
// calls that go to handlers, and tells the world webhooks are called.
func installWebhooks(b *bubble, plugins *kube.AdmissionPlugins, handlers map[string]http.Handler) (*webhookCalls, error) {
	w := b.w
	calls := &webhookCalls{w: w, handlers: handlers, fail: b.fail}
	hooks, err := webhooks.InProcess(w.Server(), calls.call)
	if err != nil {
		return nil, fmt.Errorf("clientgo: %w", err)
	}
	plugins.Set(hooks...)
	w.EnableWebhooks()
	return calls, nil
}

// call is the plugins' Caller: it waits for the coordinator's answer, then does what it says.
func (c *webhookCalls) call(name string, req *http.Request) (*http.Response, error) {
	call := &webhookCall{name: name, req: req, answer: make(chan world.WebhookAnswer, 1), done: make(chan struct{}), timeout: requestTimeout(req)}
	c.mu.Lock()
	c.pending = append(c.pending, call)
	if !c.coordinating {
		c.coordinating = true
		go c.coordinate()
	}
	c.mu.Unlock()
	defer close(call.done)
	ans := <-call.answer
	return c.perform(call, ans)
}

// coordinate lets one round of calls go, in the order their answers arrive (see above).
func (c *webhookCalls) coordinate() {
	synctest.Wait() // every call of the round is pending, every other goroutine blocked
	c.mu.Lock()
	round := c.pending
	c.pending, c.coordinating = nil, false
	c.mu.Unlock()
	slices.SortStableFunc(round, func(x, y *webhookCall) int {
		return cmp.Or(cmp.Compare(x.name, y.name), cmp.Compare(x.req.URL.String(), y.req.URL.String()))
	})
	answers := make([]world.WebhookAnswer, len(round))
	for i, call := range round {
		ans, err := c.w.WebhookCall(call.name)
		if err != nil {
			c.fail(fmt.Errorf("clientgo: %w", err))
		}
		answers[i] = ans
		call.delay = ans.Delay
		if call.timeout > 0 && ans.Delay >= call.timeout {
			call.delay = call.timeout
		}
	}
	order := make([]int, len(round))
	var longest time.Duration
	for i := range order {
		order[i] = i
		longest = max(longest, round[i].delay)
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(round[i].delay, round[j].delay) })
	if d, ok := round[0].req.Context().Value(writeDelayKey{}).(*writeDelay); ok {
		d.add(longest)
	}
	for n, i := range order {
		call := round[i]
		call.answer <- answers[i]
		if n == len(order)-1 {
			// The last call's goroutine (the driver itself, for a mutating webhook) goes on
			// with the step: the coordinator must not wait any more, or it would wait beside
			// the driver's own synctest.Wait.
			return
		}
		// The others wait for their turn while this one runs to its end (its result handed
		// to the plugin); the driver waits in the plugin for all of them.
		<-call.done
		synctest.Wait()
	}
}

// perform does what the world decided for call: a timeout, a refused connection or an HTTP
// error as net/http and the webhook's server would give them, else the handler's answer.
func (c *webhookCalls) perform(call *webhookCall, ans world.WebhookAnswer) (*http.Response, error) {
	req := call.req
	host := req.URL.Host
	switch {
	case call.timeout > 0 && ans.Delay >= call.timeout:
		// The plugin's context expires first: net/http gives its error, which the client wraps
		// with the request (Post "https://...?timeout=10s": context deadline exceeded).
		return nil, context.DeadlineExceeded
	case ans.Refused:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: hostAddr(host), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case ans.Code != 0:
		text := http.StatusText(int(ans.Code))
		return &http.Response{StatusCode: int(ans.Code), Status: fmt.Sprintf("%d %s", ans.Code, text), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, Body: newBody(text + "\n"), ContentLength: int64(len(text) + 1), Request: req}, nil
	}
	h, ok := c.handlers[host]
	if !ok {
		// No server at that address: as a dial to a port nobody listens on.
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: hostAddr(host), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	rec := newRecorder()
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	c.handling.Store(true)
	h.ServeHTTP(rec, in)
	c.handling.Store(false)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// callFromHandler refuses a call to the world made while a webhook's handler runs off the
// driver: only that handler (or what it started) can be calling then, since every goroutine of
// the controller is blocked during a step, and the call could only be served after the step,
// which waits for the handler: the run would hang. The error says so and ends the run.
func (c *webhookCalls) callFromHandler(key string) error {
	if c == nil || !c.handling.Load() {
		return nil
	}
	parts := strings.SplitN(key, " ", 3) // the method and the URI
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return fmt.Errorf("clientgo: a webhook's handler called the apiserver (%s) while the write that called the webhook was being served: the run cannot serve it before that write is done (a validating webhook's handler must not call the apiserver in the harness; Cluster.Webhooks)", strings.Join(parts, " "))
}

// requestTimeout reads the ?timeout= kube-apiserver's plugin puts on a webhook's URL (its
// timeoutSeconds, 10 s by default), 0 when there is none.
func requestTimeout(req *http.Request) time.Duration {
	d, err := time.ParseDuration(req.URL.Query().Get("timeout"))
	if err != nil {
		return 0
	}
	return d
}

// hostAddr is a webhook server's address as a dial error names it.
type hostAddr string

func (a hostAddr) Network() string { return "tcp" }
func (a hostAddr) String() string {
	if _, _, err := net.SplitHostPort(string(a)); err == nil {
		return string(a)
	}
	return net.JoinHostPort(string(a), "443")
}

func newBody(s string) *bodyReader { return &bodyReader{Reader: strings.NewReader(s)} }

type bodyReader struct{ *strings.Reader }

func (bodyReader) Close() error { return nil }

// webhookReport is the Report's part about the webhooks.
func (c *webhookCalls) report() *WebhookReport {
	if c == nil {
		return nil
	}
	r := &WebhookReport{Calls: c.w.WebhookCalls(), Faults: c.w.WebhookFaults()}
	for _, f := range r.Faults {
		if !f.Fired {
			r.Unfired++
		}
	}
	return r
}

// WebhookReport is what the admission webhooks of a run (Cluster.Webhooks) met.
type WebhookReport struct {
	// Calls counts the calls to webhooks.
	Calls int
	// Faults are the webhook fault ops applied (slow-webhook, refuse-webhook, fail-webhook), in
	// order, each with whether a call met it; Unfired counts those no call met. A fault that
	// never fired tested nothing: Report.String names it, and Run logs it.
	Faults  []world.WebhookFault
	Unfired int
}

// String summarises it: "3 calls, faults fired 1 of 2 (never fired: refuse-webhook name=x at 2s)".
func (r *WebhookReport) String() string {
	fired := len(r.Faults) - r.Unfired
	s := fmt.Sprintf("%d calls, faults fired %d of %d", r.Calls, fired, len(r.Faults))
	if r.Unfired > 0 {
		var never []string
		for _, f := range r.Faults {
			if !f.Fired {
				never = append(never, fmt.Sprintf("%s at %v", f.Op, f.At))
			}
		}
		s += " (never fired: " + strings.Join(never, "; ") + ")"
	}
	return s
}
