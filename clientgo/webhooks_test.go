package clientgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/sim/world"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var (
	validatingConfigsGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutatingConfigsGVR   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
)

// reviewer is a validating webhook's server: it admits every ConfigMap, but one whose data
// holds "deny", and counts the reviews it answered, by path.
type reviewer struct {
	// expectMark: the validating path refuses a ConfigMap the mutating path did not mark.
	expectMark bool

	mu    sync.Mutex
	calls map[string]int
}

func (r *reviewer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[req.URL.Path]++
	r.mu.Unlock()
	var cm corev1.ConfigMap
	_ = json.Unmarshal(review.Request.Object.Raw, &cm)
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: cm.Data["deny"] == ""}
	if req.URL.Path == "/mutate" {
		// The mutating webhook marks the ConfigMap; the validating one then sees the mark.
		pt := admissionv1.PatchTypeJSONPatch
		resp.Allowed, resp.PatchType, resp.Patch = true, &pt, []byte(`[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`)
	} else if cm.Labels["mutated"] == "" && r.expectMark {
		resp.Allowed, resp.Result = false, &metav1.Status{Code: http.StatusForbidden, Message: "not mutated first"}
	}
	if !resp.Allowed && resp.Result == nil {
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "deny is set"}
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

func (r *reviewer) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[path]
}

// validatingWebhook is one webhook of a ValidatingWebhookConfiguration, on creates of
// ConfigMaps, served at https://webhook.test:9443/<path>, with timeoutSeconds 5.
func validatingWebhook(name, path, policy string) map[string]any {
	return map[string]any{
		"name":                    name,
		"clientConfig":            map[string]any{"url": "https://webhook.test:9443/" + path},
		"rules":                   []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}},
		"failurePolicy":           policy,
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
		"timeoutSeconds":          int64(5),
	}
}

// creation is what the controller's one create met: its error, and how long (simulated) the
// answer took.
type creation struct {
	mu   sync.Mutex
	err  error
	took time.Duration
	done bool
}

// creator is a controller's main that creates one ConfigMap, "probe", with data, and then waits
// for the end of the run.
func creator(c *creation, data map[string]string) clientgo.Main {
	return clientgo.Main(func(ctx context.Context, cfg *rest.Config) error {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		start := time.Now() // the bubble's clock: the world's
		_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Data: data}, metav1.CreateOptions{})
		c.mu.Lock()
		c.err, c.took, c.done = err, time.Since(start), true
		c.mu.Unlock()
		<-ctx.Done()
		return nil
	})
}

// webhookRun is a run whose Setup writes a configuration of hooks and applies faults, and whose
// controller creates the probe.
func webhookRun(t *testing.T, seed uint64, hooks []any, faults []world.Op, data map[string]string) (*clientgo.Report, *creation, *reviewer) {
	t.Helper()
	return webhookRunWith(t, seed, &reviewer{}, nil, hooks, faults, data)
}

// webhookRunWith is webhookRun with the webhooks' server srv, and mutating webhooks.
func webhookRunWith(t *testing.T, seed uint64, srv *reviewer, mutating, hooks []any, faults []world.Op, data map[string]string) (*clientgo.Report, *creation, *reviewer) {
	t.Helper()
	c := &creation{}
	rep, err := clientgo.Run(t, clientgo.Config{
		Seed:    seed,
		Cluster: clientgo.Cluster{Webhooks: map[string]http.Handler{"webhook.test:9443": srv}},
		Setup: func(w *world.World) error {
			if err := w.Apply(world.Op{Kind: world.OpCreate, Resource: validatingConfigsGVR, Name: "probe-checks", Content: map[string]any{"webhooks": hooks}}); err != nil {
				return err
			}
			if mutating != nil {
				if err := w.Apply(world.Op{Kind: world.OpCreate, Resource: mutatingConfigsGVR, Name: "probe-marks", Content: map[string]any{"webhooks": mutating}}); err != nil {
					return err
				}
			}
			for _, op := range faults {
				if err := w.Apply(op); err != nil {
					return err
				}
			}
			return nil
		},
		Controller: creator(c, data),
		Phases:     clientgo.Phases{FaultsFor: 20 * time.Second, Settle: time.Second},
	})
	if err != nil {
		t.Fatal(err, rep.Failure)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		t.Fatal("the controller's create never returned")
	}
	return rep, c, srv
}

// Goal: an admission webhook in the world is an actor whose slowness is a fault of the world's
// table: a slow-webhook op longer than the webhook's timeoutSeconds makes the call time out, and
// kube-apiserver's webhook plugin then refuses the controller's write with its own message under
// failurePolicy Fail, and admits it under Ignore; either way the controller's answer comes
// after the timeout, the webhook's server never answering. Without the fault, the webhook is
// called and its denial reaches the controller in kube-apiserver's words.
// Method: three runs of a controller creating one ConfigMap, with a ValidatingWebhookConfiguration
// of one webhook (timeoutSeconds 5) and the op slow-webhook by=10s; the report says the fault
// fired.
func TestWebhookTimeoutHonoursFailurePolicy(t *testing.T) {
	const name = "vconfigmap.example.com"
	slow := []world.Op{{Kind: world.OpSlowWebhook, Name: name, Duration: 10 * time.Second}}

	rep, c, srv := webhookRun(t, 1, []any{validatingWebhook(name, "validate", "Fail")}, slow, nil)
	want := `Internal error occurred: failed calling webhook "vconfigmap.example.com": failed to call webhook: Post "https://webhook.test:9443/validate?timeout=5s": context deadline exceeded`
	if c.err == nil || c.err.Error() != want || !apierrors.IsInternalError(c.err) {
		t.Errorf("Fail: the create got %v, want the 500 %q", c.err, want)
	}
	if c.took < 5*time.Second {
		t.Errorf("Fail: the create's answer took %v, want at least the webhook's timeout (5s)", c.took)
	}
	if n := srv.count("/validate"); n != 0 {
		t.Errorf("Fail: the webhook's server answered %d reviews; the call timed out before it could", n)
	}
	if rep.Diagnostics.Webhooks == nil || rep.Diagnostics.Webhooks.Calls != 1 || rep.Diagnostics.Webhooks.Unfired != 0 || !rep.Diagnostics.Webhooks.Faults[0].Fired {
		t.Errorf("Fail: the report's webhooks: %+v", rep.Diagnostics.Webhooks)
	}
	if !strings.Contains(rep.Trace, "webhook") || !strings.Contains(rep.Trace, "slow-webhook") {
		t.Errorf("Fail: the trace does not narrate the call and its fault:\n%s", rep.Trace)
	}

	_, c, srv = webhookRun(t, 1, []any{validatingWebhook(name, "validate", "Ignore")}, slow, nil)
	if c.err != nil {
		t.Errorf("Ignore: the create got %v, want it admitted", c.err)
	}
	if c.took < 5*time.Second {
		t.Errorf("Ignore: the create's answer took %v, want at least the webhook's timeout (5s)", c.took)
	}
	if n := srv.count("/validate"); n != 0 {
		t.Errorf("Ignore: the webhook's server answered %d reviews", n)
	}

	_, c, srv = webhookRun(t, 1, []any{validatingWebhook(name, "validate", "Fail")}, nil, map[string]string{"deny": "yes"})
	want = `admission webhook "vconfigmap.example.com" denied the request: deny is set`
	if c.err == nil || c.err.Error() != want || !apierrors.IsForbidden(c.err) {
		t.Errorf("no fault: the create got %v, want the webhook's 403 %q", c.err, want)
	}
	if n := srv.count("/validate"); n != 1 {
		t.Errorf("no fault: the webhook's server answered %d reviews, want 1", n)
	}
}

// Goal: kube-apiserver calls a write's validating webhooks in parallel and answers with the
// first refusal to arrive; in the world that is the one whose answer arrives first, whatever
// the names and Go's scheduler, so a seed replays it. The other faults: a refused connection
// and a webhook's server answering 500, each in kube-apiserver's words.
// Method: two webhooks under Fail, "a-slow" slowed past its timeout and "b-refused" refused:
// b's refusal arrives first (after its drawn delay, under 50ms) and is the answer, though a
// sorts first; the same seed twice gives the same trace. Then one webhook answering 500.
func TestWebhookFirstRefusalToArriveWins(t *testing.T) {
	hooks := []any{validatingWebhook("a-slow.example.com", "a", "Fail"), validatingWebhook("b-refused.example.com", "b", "Fail")}
	faults := []world.Op{{Kind: world.OpSlowWebhook, Name: "a-slow.example.com", Duration: time.Minute}, {Kind: world.OpRefuseWebhook, Name: "b-refused.example.com"}}
	rep1, c, _ := webhookRun(t, 7, hooks, faults, nil)
	want := `Internal error occurred: failed calling webhook "b-refused.example.com": failed to call webhook: Post "https://webhook.test:9443/b?timeout=5s": dial tcp webhook.test:9443: connect: connection refused`
	if c.err == nil || c.err.Error() != want {
		t.Errorf("the create got %v, want %q", c.err, want)
	}
	if c.took < 5*time.Second {
		t.Errorf("the create's answer took %v: the write waits for every webhook, the slow one until its timeout (5s)", c.took)
	}
	rep2, _, _ := webhookRun(t, 7, hooks, faults, nil)
	if rep1.Hash != rep2.Hash {
		t.Errorf("seed 7 twice: trace hashes %s and %s", rep1.Hash, rep2.Hash)
	}

	_, c, _ = webhookRun(t, 1, []any{validatingWebhook("v.example.com", "validate", "Fail")},
		[]world.Op{{Kind: world.OpFailWebhook, Name: "v.example.com", Code: 500}}, nil)
	want = `Internal error occurred: failed calling webhook "v.example.com": failed to call webhook: an error on the server ("Internal Server Error") has prevented the request from succeeding`
	if c.err == nil || c.err.Error() != want {
		t.Errorf("fail-webhook code=500: the create got %v, want %q", c.err, want)
	}
}

// Goal: a webhook fault that no call met is reported, not passed over: the run's report counts
// it as never fired and says which, and a world that calls no webhooks refuses the op outright.
// Method: a fault on a webhook no configuration names; then the op in a bare world.
func TestWebhookFaultNeverFiredIsReported(t *testing.T) {
	rep, c, _ := webhookRun(t, 1, []any{validatingWebhook("v.example.com", "validate", "Fail")},
		[]world.Op{{Kind: world.OpRefuseWebhook, Name: "other.example.com"}}, nil)
	if c.err != nil {
		t.Errorf("the create got %v: the fault was on another webhook", c.err)
	}
	if rep.Diagnostics.Webhooks == nil || rep.Diagnostics.Webhooks.Unfired != 1 || rep.Diagnostics.Webhooks.Calls != 1 {
		t.Fatalf("the report's webhooks: %+v, want 1 call and 1 fault never fired", rep.Diagnostics.Webhooks)
	}
	if s := rep.String(); !strings.Contains(s, "never fired: refuse-webhook name=other.example.com") {
		t.Errorf("the report does not name the fault that never fired: %s", s)
	}
	w, err := world.New(1, world.Config{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Apply(world.Op{Kind: world.OpRefuseWebhook})
	if err == nil || !strings.Contains(err.Error(), "no admission webhook is called in this world") {
		t.Errorf("refuse-webhook in a world calling no webhooks: %v", err)
	}
}

// Goal: a mutating webhook in the world: its patch is applied before the validating webhooks
// see the object, and the controller's answer waits for both webhooks (one after the other:
// two rounds of calls), one slowed by a slow-webhook op that stays within its timeout.
// Method: a mutating webhook labelling the ConfigMap and a validating one refusing it unlabelled;
// slow-webhook by=3s on the mutating one (timeout 5s): the create succeeds, labelled, after 3s.
func TestMutatingWebhookInTheWorld(t *testing.T) {
	mutating := validatingWebhook("mconfigmap.example.com", "mutate", "Fail")
	rep, c, srv := webhookRunWith(t, 2, &reviewer{expectMark: true}, []any{mutating},
		[]any{validatingWebhook("vconfigmap.example.com", "validate", "Fail")},
		[]world.Op{{Kind: world.OpSlowWebhook, Name: "mconfigmap.example.com", Duration: 3 * time.Second}}, nil)
	if c.err != nil {
		t.Fatalf("the create got %v, want it mutated then admitted", c.err)
	}
	if c.took < 3*time.Second || c.took > 4*time.Second {
		t.Errorf("the create's answer took %v, want the slow mutating webhook's 3s and the drawn delays", c.took)
	}
	if srv.count("/mutate") != 1 || srv.count("/validate") != 1 || rep.Diagnostics.Webhooks.Calls != 2 || rep.Diagnostics.Webhooks.Unfired != 0 {
		t.Errorf("reviews: %d mutating, %d validating; report %v", srv.count("/mutate"), srv.count("/validate"), rep.Diagnostics.Webhooks)
	}
}

// Goal: a validating webhook's handler that calls the apiserver would wait for the step that
// waits for it; the run fails at once saying so, instead of hanging.
// Method: the handler GETs a ConfigMap with a clientset of the controller's configuration.
func TestWebhookHandlerCallingTheAPIServerFailsTheRun(t *testing.T) {
	var cfgs sync.Map // the controller's *rest.Config, for the handler
	handler := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		v, _ := cfgs.Load("cfg")
		cs, err := kubernetes.NewForConfig(v.(*rest.Config))
		if err == nil {
			_, err = cs.CoreV1().ConfigMaps("default").Get(req.Context(), "other", metav1.GetOptions{})
		}
		http.Error(w, fmt.Sprint(err), http.StatusInternalServerError)
	})
	rep, err := clientgo.Run(t, clientgo.Config{
		Seed:    1,
		Cluster: clientgo.Cluster{Webhooks: map[string]http.Handler{"webhook.test:9443": handler}},
		Setup: func(w *world.World) error {
			return w.Apply(world.Op{Kind: world.OpCreate, Resource: validatingConfigsGVR, Name: "probe-checks",
				Content: map[string]any{"webhooks": []any{validatingWebhook("v.example.com", "validate", "Ignore")}}})
		},
		Controller: clientgo.Main(func(ctx context.Context, cfg *rest.Config) error {
			cfgs.Store("cfg", cfg)
			return creator(&creation{}, nil)(ctx, cfg)
		}),
		Phases: clientgo.Phases{FaultsFor: 5 * time.Second, Settle: time.Second},
	})
	if err == nil || !strings.Contains(err.Error(), "a webhook's handler called the apiserver (GET /api/v1/namespaces/default/configmaps/other)") {
		t.Fatalf("the run: %v\n%s", err, rep.Failure)
	}
}
