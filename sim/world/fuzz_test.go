package world

import (
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
)

// FuzzApplyOp: any line in Op's text form either fails to parse, with an error naming it, or
// applies to a running world (one informer, one handler, two replicas) without a panic: a bad
// op is refused with a "world: " error and the world still converges afterwards.
func FuzzApplyOp(f *testing.F) {
	for _, l := range []string{
		"create name=a label:app=web", "update name=a label:app=db annotation:k=v", "delete name=a",
		"patch name=a patchType=merge patch={\"data\":{\"k\":\"v\"}}", "patch name=a patchType=json patch=[{\"op\":\"test\",\"path\":\"/x\",\"value\":1}]",
		"close-watches code=410", "compact", "fail-next verb=watch code=500", "burn-revisions count=5",
		"sleep duration=1s", "create name=b resource=v1/configmaps content={\"data\":{\"k\":\"v\"}}",
		"create name=c finalizers=f1", "delete name=c",
	} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		op, err := Parse(line)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "world: ") {
				t.Fatalf("Parse(%q): error %q does not start with the package name", line, err)
			}
			return
		}
		w, err := NewFromConfig(sim.Config{Seed: 1}, fakeapi.Config{Replicas: 2}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := w.AddInformer("inf1", InformerSpec{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddHandler(n, "h1", nil, HandlerOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(Op{Kind: OpCreate, Name: "a"}); err != nil {
			t.Fatal(err)
		}
		// A refused op says "world: ...", a write the apiserver refuses is its Status (404, 422...).
		var status apierrors.APIStatus
		if err := w.Apply(op); err != nil && !strings.HasPrefix(err.Error(), "world: ") && !errors.As(err, &status) {
			t.Fatalf("Apply(%s): error %q is neither the world's nor the apiserver's", op, err)
		}
		w.Sim().SetFaultsEnabled(false)
		if err := w.RunUntilConverged(time.Hour); err != nil {
			t.Fatalf("after Apply(%s): %v", op, err)
		}
	})
}
