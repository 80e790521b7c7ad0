package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world/narration"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file holds the admission webhooks' side of the world: a webhook is an actor of the world
// whose answers take a time drawn from the seed and whose failures are faults like any other,
// ops of the fault table (slow-webhook, refuse-webhook, fail-webhook).
//
// The world itself calls no webhook: its own writes (ops, a Generator's) go straight to the
// apiserver, and the admission webhook plugins are kube-apiserver's, in a nested module. Whoever
// does call them inside a run (the client-go harness, whose REST front runs the plugins in the
// step that serves a write) says so with EnableWebhooks, then asks WebhookCall what each call
// meets. Until then the webhook ops are refused: a fault that could never fire is an error, not
// a quiet pass.

// StreamWebhooks is the random stream a webhook's answer delay is drawn from.
const StreamWebhooks = "webhooks"

// WebhookAnswer is what one call to an admission webhook meets, as WebhookCall decides it.
type WebhookAnswer struct {
	// Delay is when the webhook's answer (or its server's failure) reaches the apiserver after
	// the call: a draw in [Config.MinLatency, Config.MaxLatency] from the "webhooks" stream,
	// plus a slow-webhook's. A Delay at or past the call's timeoutSeconds is a timeout: the
	// apiserver gives up at the timeout and the webhook's answer is never read.
	Delay time.Duration
	// Refused says the connection to the webhook's server is refused (refuse-webhook).
	Refused bool
	// Code, when not 0, is the HTTP error code the webhook's server answers instead of an
	// AdmissionReview (fail-webhook).
	Code int32
}

// WebhookFault is one webhook fault op applied to the world, and whether it fired.
type WebhookFault struct {
	// Op is the op (slow-webhook, refuse-webhook or fail-webhook), At when it was applied.
	Op Op
	At time.Duration
	// Fired says a call met it; FiredAt is when, and FiredOn the webhook called.
	Fired   bool
	FiredAt time.Duration
	FiredOn string
}

// webhooks is the world's webhook state: armed faults in the order applied, each firing at the
// next call to its webhook (any webhook when its Name is "").
type webhooks struct {
	enabled bool
	faults  []WebhookFault
	calls   int
}

// EnableWebhooks says that admission webhooks are called in this world's run (the client-go
// harness with Cluster.Webhooks calls it): the webhook ops are accepted from then on, and
// WebhookCall answers.
func (w *World) EnableWebhooks() { w.hooks.enabled = true }

// WebhookCall decides what one call to the admission webhook name (its name in its
// configuration) meets, and narrates it (actor "webhook", kind "call"): the first armed fault
// for it, in the order the faults were applied, fires (a delay from slow-webhook adds to the
// drawn one, refuse-webhook and fail-webhook fail the call), unless the world's faults are off
// (the liveness phase: the webhook then answers in its drawn time). Calls made in one step must
// be asked in an order that does not depend on Go's scheduler (the harness asks in name order).
func (w *World) WebhookCall(name string) (WebhookAnswer, error) {
	if !w.hooks.enabled {
		return WebhookAnswer{}, errors.New("world: WebhookCall: webhooks are not enabled in this world (EnableWebhooks)")
	}
	if name == "" {
		return WebhookAnswer{}, errors.New("world: WebhookCall: empty webhook name")
	}
	w.hooks.calls++
	r := w.s.Rand(StreamWebhooks)
	ans := WebhookAnswer{Delay: w.cfg.MinLatency + time.Duration(r.Int64N(int64(w.cfg.MaxLatency-w.cfg.MinLatency)+1))}
	fields := []sim.Field{sim.F("name", name)}
	if w.s.FaultsEnabled() {
		// At most one fault of each kind fires at a call: a slow answer and a failure may meet.
		var slow, failed bool
		for i := range w.hooks.faults {
			f := &w.hooks.faults[i]
			if f.Fired || (f.Op.Name != "" && f.Op.Name != name) {
				continue
			}
			switch f.Op.Kind {
			case OpSlowWebhook:
				if slow {
					continue
				}
				slow = true
				ans.Delay += f.Op.Duration
			case OpRefuseWebhook, OpFailWebhook:
				if failed {
					continue
				}
				failed = true
				ans.Refused, ans.Code = f.Op.Kind == OpRefuseWebhook, f.Op.Code
			}
			f.Fired, f.FiredAt, f.FiredOn = true, w.s.Now(), name
			fields = append(fields, sim.F("fault", f.Op.String()))
		}
	}
	fields = append(fields, sim.FDur("delay", ans.Delay))
	switch {
	case ans.Refused:
		fields = append(fields, sim.F("outcome", "refused"))
	case ans.Code != 0:
		fields = append(fields, sim.F("outcome", strconv.Itoa(int(ans.Code))))
	}
	w.s.Emit(narration.ActorWebhook, narration.KindWebhookCall, fields...)
	return ans, nil
}

// WebhookFaults returns every webhook fault op applied so far, in order, with whether it fired.
func (w *World) WebhookFaults() []WebhookFault { return slices.Clone(w.hooks.faults) }

// WebhookCalls returns how many webhook calls WebhookCall decided.
func (w *World) WebhookCalls() int { return w.hooks.calls }

// webhookRow is the row of a webhook fault named name: it takes the webhook's Name (optional:
// "" is the next call to any webhook) and the fields more adds, narrated as "<name> name=W
// ...", and arms the fault for the next call. A Generator draws it on a webhook of the
// configurations the apiserver holds, or on any.
func webhookRow(kind OpKind, name string, more []opArg, check func(Op) error, draw func(r *rand.Rand, op *Op)) opRow {
	row := opRow{name: name, fault: true, args: append([]opArg{{field: fieldName, key: "name"}}, more...)}
	row.check = func(op Op) error {
		if op.Name != "" && !validName(op.Name) {
			return fmt.Errorf("invalid webhook Name %q", op.Name)
		}
		if check != nil {
			return check(op)
		}
		return nil
	}
	row.target = func(w *World, _ Op) error {
		if !w.hooks.enabled {
			return errors.New("no admission webhook is called in this world (a client-go harness run with Cluster.Webhooks calls them)")
		}
		return nil
	}
	row.apply = func(w *World, op Op) error {
		if !w.hooks.enabled { // a Generator applies without target's check
			return errors.New("world: no admission webhook is called in this world")
		}
		w.s.Emit(narration.ActorAPIServer, name, sim.F("name", op.Name))
		w.hooks.faults = append(w.hooks.faults, WebhookFault{Op: op, At: w.s.Now()})
		return nil
	}
	row.draw = func(g *Generator, r *rand.Rand) Op {
		op := Op{Kind: kind}
		if names := g.w.webhookNames(); len(names) > 0 {
			if i := r.IntN(len(names) + 1); i < len(names) {
				op.Name = names[i]
			}
		}
		if draw != nil {
			draw(r, &op)
		}
		return op
	}
	return row
}

// webhookConfigurations are the resources whose objects name the webhooks.
var webhookConfigurations = []schema.GroupVersionResource{
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
}

// webhookNames are the names of the webhooks the apiserver's configurations hold, sorted, read
// with Snapshot (no request, no draw).
func (w *World) webhookNames() []string {
	var names []string
	for _, gvr := range webhookConfigurations {
		list, err := w.srv.Snapshot(gvr, "", metav1.ListOptions{})
		if err != nil {
			continue // not served
		}
		for _, item := range list.Items {
			hooks, _, _ := unstructuredSlice(item.Object, "webhooks")
			for _, h := range hooks {
				if m, ok := h.(map[string]any); ok {
					if n, ok := m["name"].(string); ok && n != "" {
						names = append(names, n)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func unstructuredSlice(obj map[string]any, key string) ([]any, bool, error) {
	v, ok := obj[key]
	if !ok {
		return nil, false, nil
	}
	s, ok := v.([]any)
	if !ok {
		return nil, true, fmt.Errorf("%s is a %T", key, v)
	}
	return s, true, nil
}
