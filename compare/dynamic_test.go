package compare

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic/dynamicinformer"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
)

// TestDynamicInformerOnFakeAPI checks that clientgo.Dynamic is enough for client-go's
// own dynamic informer factory to run on fakeapi: it syncs the pods created before start and
// then sees a pod created after it (through the factory's ListWatch, in watch-list mode, since
// the adapter does not opt out of it).
func TestDynamicInformerOnFakeAPI(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv, err := fakeapi.New(fakeapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	client := clientgo.Dynamic(srv)
	create := func(name string) {
		t.Helper()
		if _, err := client.Resource(podsGVR).Namespace("a").Create(ctx, newPod("a", name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		create(fmt.Sprintf("p%d", i))
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	inf := factory.ForResource(podsGVR).Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown() // waits for the informers, after the cancel deferred next
	defer cancel()
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatal("dynamic informer did not sync")
		}
	}
	create("p3")
	for len(inf.GetStore().ListKeys()) != 4 {
		select {
		case <-ctx.Done():
			t.Fatalf("store has %v, want 4 pods", inf.GetStore().ListKeys())
		case <-time.After(10 * time.Millisecond):
		}
	}
	watchLists := 0
	for _, rq := range srv.Requests() {
		if rq.Verb == fakeapi.VerbWatch && rq.Options.SendInitialEvents != nil && *rq.Options.SendInitialEvents {
			watchLists++
		}
	}
	if watchLists != 1 {
		t.Errorf("%d watch-list requests, want 1", watchLists)
	}
}
