package clientgo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// TestEveryInformerKindIsServed: a main that builds, from the *rest.Config alone, a
// dynamicinformer, a metadatainformer, a bare cache.NewSharedIndexInformer over a ListWatch and
// a record.EventBroadcaster: every informer syncs, sees the world's ConfigMaps, the event is
// written, the Report counts the streams by form, and the same seed gives the same hash.
func TestEveryInformerKindIsServed(t *testing.T) {
	synced := map[string]int{}
	main := func(ctx context.Context, cfg *rest.Config) error {
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		md, err := metadata.NewForConfig(cfg)
		if err != nil {
			return err
		}
		dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		dynInf := dynFactory.ForResource(cmsGVR).Informer()
		mdFactory := metadatainformer.NewSharedInformerFactory(md, 0)
		mdInf := mdFactory.ForResource(cmsGVR).Informer()
		lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "configmaps", "", fields.Everything())
		bare := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		broadcaster := record.NewBroadcaster(record.WithContext(ctx))
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
		recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kinds"})
		dynFactory.Start(ctx.Done())
		mdFactory.Start(ctx.Done())
		go bare.RunWithContext(ctx)
		if !cache.WaitForCacheSync(ctx.Done(), dynInf.HasSynced, mdInf.HasSynced, bare.HasSynced) {
			return ctx.Err()
		}
		synced["dynamic"] = len(dynInf.GetStore().ListKeys())
		synced["metadata"] = len(mdInf.GetStore().ListKeys())
		synced["bare"] = len(bare.GetStore().ListKeys())
		recorder.Event(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c0", Namespace: "default"}}, corev1.EventTypeNormal, "Synced", "every informer synced")
		<-ctx.Done()
		broadcaster.Shutdown()
		dynFactory.Shutdown()
		mdFactory.Shutdown()
		return nil
	}
	cfg := mirrorConfig(3, 2, nil)
	cfg.Controller, cfg.Checks.Outcome, cfg.Phases.FaultsFor = clientgo.Main(main), nil, 20*time.Second
	rep, err := clientgo.Run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, rep.Failure)
	}
	for _, k := range []string{"dynamic", "metadata", "bare"} {
		if synced[k] < 3 {
			t.Errorf("the %s informer synced with %d objects, want the 3 initial ConfigMaps at least", k, synced[k])
		}
	}
	var kinds []string
	for _, k := range rep.Diagnostics.Streams {
		kinds = append(kinds, k.String())
	}
	// The dynamic informer and the bare one (a RESTClient's ListWatch) both watch in JSON.
	want := "configmaps/v1 (json) configmaps/v1 (metadata)"
	if got := strings.Join(kinds, " "); got != want || rep.Diagnostics.Streams[0].Watches < 2 {
		t.Errorf("streams %q (%+v), want %q with two JSON watches at least", got, rep.Diagnostics.Streams, want)
	}
	t.Logf("%v", rep)
	if !strings.Contains(rep.Trace, `controller: response request="POST /api/v1/namespaces/default/events" code=201`) {
		t.Errorf("the broadcaster's event was not written")
	}
	again, err := clientgo.Run(t, cfg)
	if err != nil || again.Hash != rep.Hash {
		t.Errorf("second run: %v, hash %s, first %s", err, again.Hash, rep.Hash)
	}
}
