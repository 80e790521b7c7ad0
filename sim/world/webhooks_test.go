package world

import (
	"strings"
	"testing"
	"time"
)

// Goal: WebhookCall is what the world decides for each webhook call: a delay drawn from the
// seed within the world's latencies, the first armed fault for the webhook (or for any, Name
// "") firing once, a slow answer and a failure meeting at one call, nothing firing while the
// faults are off, and every fault op listed with whether it fired.
// Method: arm four faults, make calls, read the answers and WebhookFaults; then a second world
// of the same seed draws the same delays.
func TestWebhookCallFiresArmedFaults(t *testing.T) {
	w, err := New(3, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WebhookCall("a"); err == nil {
		t.Error("WebhookCall before EnableWebhooks answered")
	}
	w.EnableWebhooks()
	if _, err := w.WebhookCall(""); err == nil {
		t.Error("WebhookCall with no name answered")
	}
	for _, op := range []Op{
		{Kind: OpSlowWebhook, Name: "a", Duration: 30 * time.Second},
		{Kind: OpRefuseWebhook, Name: "a"},
		{Kind: OpFailWebhook, Code: 503},
		{Kind: OpRefuseWebhook, Name: "never"},
	} {
		if err := w.Apply(op); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string) WebhookAnswer {
		t.Helper()
		ans, err := w.WebhookCall(name)
		if err != nil {
			t.Fatal(err)
		}
		if base := ans.Delay % (30 * time.Second); base < DefaultMinLatency || base > DefaultMaxLatency {
			t.Errorf("call to %s: delay %v is not a drawn latency (plus a slow-webhook's)", name, ans.Delay)
		}
		return ans
	}
	first := call("a")
	if first.Delay < 30*time.Second || !first.Refused || first.Code != 0 {
		t.Errorf("first call to a: %+v, want slowed by 30s and refused", first)
	}
	if got := call("b"); got.Delay >= 30*time.Second || got.Refused || got.Code != 503 {
		t.Errorf("call to b: %+v, want the 503 armed for any webhook", got)
	}
	if got := call("a"); got.Delay >= 30*time.Second || got.Refused || got.Code != 0 {
		t.Errorf("second call to a: %+v, want no fault left for it", got)
	}
	if err := w.Apply(Op{Kind: OpRefuseWebhook, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	w.Sim().SetFaultsEnabled(false)
	if got := call("a"); got.Refused {
		t.Errorf("call to a with the faults off: %+v, want it answered", got)
	}
	faults := w.WebhookFaults()
	var fired []string
	for _, f := range faults {
		if f.Fired {
			fired = append(fired, f.Op.String()+" on "+f.FiredOn)
		}
	}
	if want := "slow-webhook name=a by=30s on a, refuse-webhook name=a on a, fail-webhook code=503 on b"; strings.Join(fired, ", ") != want {
		t.Errorf("fired: %s, want %s", strings.Join(fired, ", "), want)
	}
	if len(faults) != 5 || faults[3].Fired || faults[4].Fired || w.WebhookCalls() != 4 {
		t.Errorf("faults %+v, %d calls: want five faults, the last two never fired, four calls", faults, w.WebhookCalls())
	}

	again, _ := New(3, Config{})
	again.EnableWebhooks()
	if x, _ := again.WebhookCall("a"); x.Delay != first.Delay-30*time.Second {
		t.Errorf("the same seed's first delay: %v, then %v", first.Delay-30*time.Second, x.Delay)
	}
}
