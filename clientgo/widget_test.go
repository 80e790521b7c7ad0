package clientgo_test

// A typed clientset for a custom resource, written by hand in the shape client-gen generates
// (types with deep copies, a scheme, a group client over rest.RESTClient, a per-resource client
// built on client-go's gentype, and an informer and lister built on tools/cache), then driven
// over the REST front like any generated clientset.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// --- types (what a project's api/v1 package holds) ---

var widgetGV = schema.GroupVersion{Group: "example.com", Version: "v1"}

type WidgetSpec struct {
	Size int32  `json:"size"`
	Note string `json:"note,omitempty"`
}

type WidgetStatus struct {
	Ready              bool  `json:"ready"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &out
}

// --- scheme (what client-gen's scheme package holds) ---

func newWidgetScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

var (
	widgetScheme         = newWidgetScheme()
	widgetCodecs         = serializer.NewCodecFactory(widgetScheme)
	widgetParameterCodec = runtime.NewParameterCodec(widgetScheme)
)

// --- typed client (what client-gen's typed/example/v1 package holds) ---

type WidgetInterface interface {
	Create(ctx context.Context, w *Widget, opts metav1.CreateOptions) (*Widget, error)
	Update(ctx context.Context, w *Widget, opts metav1.UpdateOptions) (*Widget, error)
	UpdateStatus(ctx context.Context, w *Widget, opts metav1.UpdateOptions) (*Widget, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*Widget, error)
	List(ctx context.Context, opts metav1.ListOptions) (*WidgetList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*Widget, error)
}

type ExampleV1Client struct{ restClient rest.Interface }

func NewExampleV1ForConfig(c *rest.Config) (*ExampleV1Client, error) {
	config := *c
	config.GroupVersion = &widgetGV
	config.APIPath = "/apis"
	config.NegotiatedSerializer = widgetCodecs.WithoutConversion()
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(&config)
	if err != nil {
		return nil, err
	}
	return &ExampleV1Client{rc}, nil
}

func (c *ExampleV1Client) Widgets(namespace string) WidgetInterface {
	return gentype.NewClientWithList[*Widget, *WidgetList](
		"widgets", c.restClient, widgetParameterCodec, namespace,
		func() *Widget { return &Widget{} }, func() *WidgetList { return &WidgetList{} },
	)
}

// --- informer and lister (what client-gen's informers and listers packages hold) ---

func newWidgetInformer(c *ExampleV1Client, namespace string) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.Widgets(namespace).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Widgets(namespace).Watch(ctx, opts)
		},
	}
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, c), &Widget{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// --- the test ---

// widgetREST is a fake apiserver serving widgets beside the built-in kinds, and the rest.Config
// of its REST front (clientgo.RESTConfig).
func widgetREST(t *testing.T) (*fakeapi.Server, *rest.Config) {
	t.Helper()
	srv, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{
		clientgo.CustomResource(widgetGV.WithKind("Widget"), "widgets", true, true),
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientgo.RESTConfig(srv)
	if err != nil {
		t.Fatal(err)
	}
	return srv, cfg
}

func widgetServer(t *testing.T) (*fakeapi.Server, *ExampleV1Client) {
	t.Helper()
	srv, cfg := widgetREST(t)
	c, err := NewExampleV1ForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// TestGeneratedStyleClientForCustomResource runs CRUD, the status subresource, CRD update rules,
// a watch and a typed informer with its lister against a custom resource.
func TestGeneratedStyleClientForCustomResource(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := testCtx(t)
	srv, c := widgetServer(t)
	widgets := c.Widgets("a")

	w, err := widgets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := widgets.Create(ctx, &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Spec: WidgetSpec{Size: 1}}, metav1.CreateOptions{})
	if err != nil || created.Generation != 1 || created.Spec.Size != 1 || created.Kind != "" && created.Kind != "Widget" {
		t.Fatalf("create: %v %+v", err, created)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*Widget).Name != "w1" {
		t.Fatalf("watch: %v %+v", ev.Type, ev.Object)
	}
	// Custom resources require a resourceVersion on update (422 without one).
	noRV := created.DeepCopyObject().(*Widget)
	noRV.ResourceVersion = ""
	if _, err := widgets.Update(ctx, noRV, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("update without resourceVersion: %v, want Invalid", err)
	}
	created.Spec.Size = 2
	created.Status.Ready = true // ignored by a write to the main resource
	updated, err := widgets.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil || updated.Generation != 2 || updated.Status.Ready {
		t.Fatalf("update: %v %+v", err, updated)
	}
	if _, err := widgets.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	updated.Status = WidgetStatus{Ready: true, ObservedGeneration: 2}
	updated.Spec.Size = 99 // ignored by a write to /status
	st, err := widgets.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil || !st.Status.Ready || st.Spec.Size != 2 || st.Generation != 2 {
		t.Fatalf("update status: %v %+v", err, st)
	}
	if _, err := widgets.Patch(ctx, "w1", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsUnsupportedMediaType(err) {
		t.Fatalf("strategic merge patch on a custom resource: %v, want 415", err)
	}
	p, err := widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"note":"hi"}}`), metav1.PatchOptions{})
	if err != nil || p.Spec.Note != "hi" {
		t.Fatalf("merge patch: %v %+v", err, p)
	}
	for _, typ := range []watch.EventType{watch.Modified, watch.Modified, watch.Modified} {
		if ev := next(t, w); ev.Type != typ {
			t.Fatalf("watch: %v, want %v", ev.Type, typ)
		}
	}

	inf := newWidgetInformer(c, "")
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ictx) }()
	defer func() { cancel(); <-done }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("widget informer did not sync")
	}
	for i := 2; i <= 4; i++ {
		if _, err := widgets.Create(ctx, &Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := widgets.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	lister := cache.NewGenericLister(inf.GetIndexer(), widgetGV.WithResource("widgets").GroupResource())
	for deadline := time.Now().Add(10 * time.Second); ; {
		objs, _ := lister.ByNamespace("a").List(labels.Everything())
		if len(objs) == 3 {
			if _, err := lister.ByNamespace("a").Get("w1"); apierrors.IsNotFound(err) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("lister has %d widgets, want w2..w4", len(objs))
		}
		time.Sleep(5 * time.Millisecond)
	}
	lists, watchLists := initialReads(srv, widgetGV.WithResource("widgets"))
	if lists != 0 || watchLists != 1 {
		t.Fatalf("the typed informer started with %d LISTs and %d watch-lists, want a watch-list", lists, watchLists)
	}
	if err := widgets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, err := widgets.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("after deletecollection: %v %+v", err, l)
	}
}
