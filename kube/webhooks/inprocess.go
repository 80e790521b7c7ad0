package webhooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/informersim/informersim/fakeapi"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// A Caller reaches the server of the admission webhook named name (its name in its
// configuration) with req, the HTTPS POST of an AdmissionReview that kube-apiserver's plugin
// built (its URL the clientConfig's, service ones as https://NAME.NAMESPACE.svc:PORT/PATH, with
// the ?timeout= the plugin sets), and returns the server's response or, for a call that failed
// on its way (refused, timed out), the error net/http's transport would return.
type Caller func(name string, req *http.Request) (*http.Response, error)

// InProcess makes the two webhook plugins for a REST front over srv, to run inside a
// deterministic run (the client-go harness, package clientgo): the mutating one first, then the
// validating one; give them to the front's kube.AdmissionPlugins. They differ from Start's in
// two ways, both so that a run replays from its seed:
//
//   - No goroutine and no informer of their own: before each write they admit, they read the
//     webhook configurations and the namespaces from srv (fakeapi.Server.Snapshot: no request,
//     no draw), when its revision moved since they last did, and hand the changes to the
//     plugins' listers and handlers. A configuration written is honoured from the next write
//     on, where kube-apiserver's informer takes a moment.
//   - No network: every call goes to call, with the webhook's name, instead of over TLS; the
//     AdmissionReview sent, the answer's reading, failurePolicy, timeoutSeconds, matching,
//     reinvocation and the errors are the plugins' own code. The configuration's caBundle is
//     still parsed as kube-apiserver parses it; no certificate is verified.
//
// The validating plugin calls its webhooks in parallel, each on a goroutine of its own, as
// kube-apiserver does; call is called concurrently then, and must order them itself if the
// first refusal must not depend on Go's scheduler.
func InProcess(srv *fakeapi.Server, call Caller) ([]admission.Interface, error) {
	if srv == nil || call == nil {
		return nil, errors.New("webhooks: InProcess: nil server or caller")
	}
	m, err := mutating.NewMutatingWebhook(nil)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	v, err := validating.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	f := &snapshotFactory{srv: srv, informers: map[reflect.Type]*snapshotInformer{}}
	resolver := func(webhookutil.AuthenticationInfoResolver) webhookutil.AuthenticationInfoResolver {
		return callResolver{call: call}
	}
	m.SetAuthenticationInfoResolverWrapper(resolver)
	v.SetAuthenticationInfoResolverWrapper(resolver)
	// The namespace matcher asks this client for a namespace its lister lacks; the snapshot
	// holds every namespace the server has, so it answers what the server would: not found.
	cs, err := kubernetes.NewForConfig(&restclient.Config{Host: "http://informersim.invalid", Transport: notFound{}, QPS: -1})
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	for _, p := range []plugin{m, v} {
		p.SetExternalKubeClientSet(cs)
		p.SetExternalKubeInformerFactory(f)
		if err := p.ValidateInitialization(); err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
	}
	// The plugins' informers exist now (ValidateInitialization made their sources): read the
	// server once, so that a plugin never waits for them.
	if err := f.refresh(); err != nil {
		return nil, err
	}
	return []admission.Interface{mutatingInProcess{m, f}, validatingInProcess{v, f}}, nil
}

// mutatingInProcess and validatingInProcess are the plugins, reading the server before each
// write and carrying the webhook's name to the Caller (namingTracer).
type mutatingInProcess struct {
	p *mutating.Plugin
	f *snapshotFactory
}

func (m mutatingInProcess) Handles(op admission.Operation) bool { return m.p.Handles(op) }

func (m mutatingInProcess) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if err := m.f.refresh(); err != nil {
		return err
	}
	return m.p.Admit(withNamingTracer(ctx), a, o)
}

type validatingInProcess struct {
	p *validating.Plugin
	f *snapshotFactory
}

func (v validatingInProcess) Handles(op admission.Operation) bool { return v.p.Handles(op) }

func (v validatingInProcess) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if err := v.f.refresh(); err != nil {
		return err
	}
	return v.p.Validate(withNamingTracer(ctx), a, o)
}

// notFound answers every request 404, as the server answers a read of a namespace its snapshot
// lacks.
type notFound struct{}

func (notFound) RoundTrip(req *http.Request) (*http.Response, error) {
	body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`
	return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// callResolver gives every webhook's REST client a transport that hands its requests to the
// Caller. It is a transport wrapper, not a transport: client-go refuses a transport of its own
// beside the CA the plugin adds.
type callResolver struct{ call Caller }

func (r callResolver) ClientConfigFor(string) (*restclient.Config, error) { return r.config(), nil }

func (r callResolver) ClientConfigForService(string, string, int) (*restclient.Config, error) {
	return r.config(), nil
}

func (r callResolver) config() *restclient.Config {
	return &restclient.Config{WrapTransport: func(http.RoundTripper) http.RoundTripper { return callTransport{r.call} }}
}

type callTransport struct{ call Caller }

func (t callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name, ok := webhookName(req.Context())
	if !ok {
		return nil, fmt.Errorf("webhooks: a call to %s names no webhook (the plugin's span did not reach the transport)", req.URL)
	}
	return t.call(name, req)
}

// The webhook's name travels from the plugin to the transport in the request's context: the
// plugins open a tracing span per call (k8s.io/component-base/tracing) carrying the webhook's
// name, which namingTracer, the tracer of the context the plugins are given, keeps in the span
// it returns. Nothing else of the call says which webhook it is for (the client is shared by
// webhooks of one URL).

// withNamingTracer returns ctx whose current span's tracer is namingTracer.
func withNamingTracer(ctx context.Context) context.Context {
	return trace.ContextWithSpan(ctx, namedSpan{})
}

func webhookName(ctx context.Context) (string, bool) {
	s, ok := trace.SpanFromContext(ctx).(namedSpan)
	return s.webhook, ok && s.webhook != ""
}

type namingProvider struct {
	embedded.TracerProvider
}

func (namingProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return namingTracer{} }

type namingTracer struct {
	embedded.Tracer
}

func (namingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	s := namedSpan{}
	if parent, ok := trace.SpanFromContext(ctx).(namedSpan); ok {
		s.webhook = parent.webhook
	}
	cfg := trace.NewSpanStartConfig(opts...)
	for _, kv := range cfg.Attributes() {
		if kv.Key == attribute.Key("webhook") {
			s.webhook = kv.Value.AsString()
		}
	}
	return trace.ContextWithSpan(ctx, s), s
}

// namedSpan records nothing; it carries the webhook's name and hands out namingTracer.
type namedSpan struct {
	noop.Span
	webhook string
}

func (namedSpan) TracerProvider() trace.TracerProvider { return namingProvider{} }

// snapshotFactory is the informer factory the plugins are given: their informers' caches are
// the server's objects, read by refresh (Snapshot) and handed to their handlers on the caller's
// goroutine. Only what the plugins use of a SharedInformerFactory is implemented: the
// admissionregistration and core groups and InformerFor; the embedded interface is nil, so any
// other method panics, naming it.
type snapshotFactory struct {
	informers.SharedInformerFactory
	srv *fakeapi.Server

	mu        sync.Mutex
	informers map[reflect.Type]*snapshotInformer
	order     []*snapshotInformer
	readAt    uint64 // the server's revision at the last refresh
	read      bool
}

func (f *snapshotFactory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f, metav1.NamespaceAll, nil)
}

func (f *snapshotFactory) Core() core.Interface { return core.New(f, metav1.NamespaceAll, nil) }

func (f *snapshotFactory) Start(<-chan struct{}) {}

// snapshotResources are the kinds the plugins read, with their resources.
var snapshotResources = map[reflect.Type]schema.GroupVersionResource{
	reflect.TypeFor[*admissionregistrationv1.MutatingWebhookConfiguration]():   admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"),
	reflect.TypeFor[*admissionregistrationv1.ValidatingWebhookConfiguration](): admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"),
	reflect.TypeFor[*corev1.Namespace]():                                       corev1.SchemeGroupVersion.WithResource("namespaces"),
}

func (f *snapshotFactory) InformerFor(obj runtime.Object, _ internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	typ := reflect.TypeOf(obj)
	if inf, ok := f.informers[typ]; ok {
		return inf
	}
	gvr, ok := snapshotResources[typ]
	if !ok {
		panic(fmt.Sprintf("webhooks: the in-process plugins asked for an informer of %T, which they do not read", obj))
	}
	inf := &snapshotInformer{gvr: gvr, typ: typ.Elem(), indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
	f.informers[typ] = inf
	f.order = append(f.order, inf)
	f.read = false
	return inf
}

// refresh reads every informer's resource from the server when its revision moved since the
// last read, and hands the changes to the handlers.
func (f *snapshotFactory) refresh() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	rev := f.srv.Revision()
	if f.read && rev == f.readAt {
		return nil
	}
	for _, inf := range f.order {
		if err := inf.refresh(f.srv); err != nil {
			return err
		}
	}
	f.read, f.readAt = true, rev
	return nil
}
