package introspect

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// The accessors reach client-go's own variables: what they set is what client-go then does.
func TestMutationDetectionSwitchReachesClientGo(t *testing.T) {
	before := MutationDetectionEnabled()
	t.Cleanup(func() { SetMutationDetectionEnabled(before) })
	for _, on := range []bool{true, false} {
		SetMutationDetectionEnabled(on)
		detector := fmt.Sprintf("%T", cache.NewCacheMutationDetector("introspect"))
		if got := detector == "*cache.defaultCacheMutationDetector"; got != on {
			t.Fatalf("detector switched %v: client-go built a %s", on, detector)
		}
	}
}

func TestWaitJitterRandReachesWait(t *testing.T) {
	drawn := WaitJitterRand()
	if drawn == nil {
		t.Fatal("wait.jitterRand read as nil")
	}
	t.Cleanup(func() { SetWaitJitterRand(drawn) })
	SetWaitJitterRand(func() float64 { return 0.5 })
	if got := wait.Jitter(time.Second, 1); got != 1500*time.Millisecond {
		t.Fatalf("wait.Jitter(1s, 1) with a draw of 0.5 = %v, want 1.5s", got)
	}
}
