package informer

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

// informer.md §9: a controller that asks its step-driven factory for another informer after
// Start calls Start again; only the new informer starts. The running one is not restarted: it
// lists once, and its handler is not told of the cached objects again as initial adds.
func TestFactoryStartAgainLeavesRunningInformersAlone(t *testing.T) {
	srv := newUServer()
	srv.unsupported = true
	srv.set(podsGVR, "a", "p1", nil)
	srv.set(cmsGVR, "a", "c1", nil)
	clk := clocktesting.NewFakeClock(infT0)
	var hosted []FactoryInformer
	f, err := NewSharedInformerFactoryWithOptions(srv.client(), time.Minute,
		WithInformerOptions(func(_ schema.GroupVersionResource, o *SharedIndexInformerOptions) { o.Clock = clk }),
		WithStepDriver(func(fi FactoryInformer) (func() error, error) { hosted = append(hosted, fi); return nil, nil }),
	)
	if err != nil {
		t.Fatal(err)
	}
	pods, _ := f.ForResource(podsGVR)
	rec := &infRec{}
	if _, err := pods.Informer().AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	f.Start(nil)
	step := func() {
		for _, fi := range hosted {
			if fi.Stepper.Reflector() == nil {
				continue
			}
			e := &infStep{t: t, clock: clk, inf: fi.Informer, st: fi.Stepper}
			e.quiesceVia(fi.Informer.(*sharedIndexInformer).lw)
		}
	}
	step()
	if _, err := f.ForResource(cmsGVR); err != nil {
		t.Fatal(err)
	}
	f.Start(nil)
	step()
	var pods2 []string
	for _, r := range srv.takeRequests() {
		if strings.HasPrefix(r, "list pods") {
			pods2 = append(pods2, r)
		}
	}
	if len(pods2) != 1 {
		t.Errorf("pods listed %d times (%q), want once: the second Start restarted the running informer", len(pods2), pods2)
	}
	if !cmp.Equal(rec.calls, []string{"add a/p1@1 init"}) {
		t.Errorf("the pods handler was told %q, want one initial add", rec.calls)
	}
	if hosted[1].Stepper.Reflector() == nil {
		t.Error("the second Start did not start the new configmaps informer")
	}
}
