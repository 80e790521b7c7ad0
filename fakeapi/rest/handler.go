package rest

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// DefaultMaxRequestBodyBytes is kube-apiserver's limit on a request body (3 MiB, its
// --max-resource-write-bytes default); larger bodies get 413 RequestEntityTooLarge.
const DefaultMaxRequestBodyBytes = 3 << 20

// Options configures a [Handler]. The zero value selects the defaults.
type Options struct {
	// MaxRequestBodyBytes bounds request bodies. Zero means DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// Codecs serve media types besides JSON (kube.RESTOptions gives protobuf), each chosen from
	// a request's Accept and Content-Type headers for the kinds it supports. None: JSON only,
	// other media types answered 406 (Accept) or 415 (Content-Type).
	Codecs []Codec
	// Patchers compute the patch types fakeapi does not model (strategic merge patch, apply),
	// by type (kube.RESTOptions gives both). A type without a Patcher gets fakeapi's answer:
	// 405 for built-in kinds (and for apply on custom resources), and for strategic merge patch
	// on custom resources, 415 as from kube-apiserver.
	Patchers map[types.PatchType]Patcher
	// Tracker records managedFields on creates, updates and patches (kube.RESTOptions gives
	// apimachinery's field manager). None: no managedFields are recorded.
	Tracker FieldTracker
	// Watch, if set, opens every watch the front serves in place of fakeapi.ResourceClient.Watch (whose
	// events a goroutine of the server pumps as they happen). A driver that serves a stream one
	// event per step of its own (clientgo's harness) opens the watch with Server.OpenWatch and
	// feeds the returned watch.Interface itself. r is the request being served; an error is
	// answered as the server's are (a Status, before the stream starts).
	Watch func(r *http.Request, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	// Tables, if set, builds the server-side tables of the kinds it knows columns for
	// (kube.RESTOptions: a CustomResourceDefinition's additionalPrinterColumns). Without it, or
	// for another kind, a table has kube-apiserver's default columns, Name and Age.
	Tables TableConvertor
	// Admission, if set, admits every object written through the front before it is stored, as
	// kube-apiserver's decoding and registry strategies do (kube.RESTOptions gives one that
	// validates, defaults and prunes with k8s.io/apiextensions-apiserver's libraries). None: the
	// objects are stored as fakeapi takes them.
	Admission Admission
	// OpenAPI, if set, gives the schemas of the kinds it knows, served in /openapi/v2 and in
	// /openapi/v3's documents (kube.RESTOptions: the built-in kinds'). Without it the documents
	// declare none and /openapi/v2 is 404.
	OpenAPI OpenAPISource
}

// Handler serves the Kubernetes REST API of one *fakeapi.Server. It is safe for concurrent use.
type Handler struct {
	srv     *fakeapi.Server
	clock   clock.PassiveClock // the server's
	maxBody int64
	// tab is the resource table served now: fixed at construction, then replaced whole (never
	// changed in place) when CustomResourceDefinitions change what is served (crd.go).
	tab atomic.Pointer[table]
	// crds is the state of the CustomResourceDefinitions the front serves (crd.go).
	crds crdState
	// admission and tables are Options.Admission and Options.Tables, fixed at construction.
	admission Admission
	tables    TableConvertor
	openAPI   OpenAPISource
	// codecs are Options.Codecs by media type, codecOrder their media types in the order given;
	// patchers is Options.Patchers. All fixed at construction.
	codecs     map[string]Codec
	codecOrder []string
	patchers   map[types.PatchType]Patcher
	tracker    FieldTracker
	openWatch  func(r *http.Request, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	// items are the encodings of committed object versions shared between responses (encache.go).
	items *encodingCache
}

// table is one immutable snapshot of what the front serves: byGV indexes the resources, groups
// lists the group names in discovery order (the legacy core group "" excluded).
type table struct {
	byGV   map[schema.GroupVersion]*groupVersion
	groups []string
}

type groupVersion struct {
	gv        schema.GroupVersion
	resources map[string]*resource
	ordered   []*resource // by resource name, for discovery
}

type resource struct {
	fakeapi.Resource
	// builtin says the GVR is one of fakeapi.BuiltinResources: kube-apiserver supports strategic
	// merge patch for those (fakeapi answers it 405) and answers it 415 for custom resources.
	builtin bool
	// defined is set for a resource a CustomResourceDefinition defines: the definition and the
	// names discovery shows.
	defined *definedResource
	// store, when set, is the resource whose objects this one serves: a version of a custom
	// resource other than its definition's storage version (a view), whose objects are those of
	// the storage version with their apiVersion rewritten both ways (conversion None).
	store schema.GroupVersionResource
	// conv, when set, converts the objects of a view whose fields differ from its store's
	// (events.k8s.io/v1 events, a view of core/v1's: events.go).
	conv *viewConversion
}

// storeGVR is the fakeapi resource that holds r's objects.
func (r *resource) storeGVR() schema.GroupVersionResource {
	if r.store.Resource != "" {
		return r.store
	}
	return r.GVR
}

// view says r serves another resource's objects under its own version.
func (r *resource) view() bool { return r.store.Resource != "" }

// NewHandler returns the REST front of srv, serving every resource of srv.Config().Resources.
func NewHandler(srv *fakeapi.Server, opts Options) (*Handler, error) {
	if srv == nil {
		return nil, errors.New("rest: nil *fakeapi.Server")
	}
	if opts.MaxRequestBodyBytes < 0 {
		return nil, fmt.Errorf("rest: MaxRequestBodyBytes %d is negative", opts.MaxRequestBodyBytes)
	}
	if opts.MaxRequestBodyBytes == 0 {
		opts.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if err := validateSeam(opts); err != nil {
		return nil, err
	}
	cfg := srv.Config()
	h := &Handler{srv: srv, clock: cfg.Clock, maxBody: opts.MaxRequestBodyBytes,
		codecs: map[string]Codec{}, patchers: map[types.PatchType]Patcher{}, tracker: opts.Tracker, openWatch: opts.Watch,
		admission: opts.Admission, tables: opts.Tables, openAPI: opts.OpenAPI, items: newEncodingCache(defaultEncodingCacheItems)}
	for _, c := range opts.Codecs {
		h.codecs[c.MediaType()] = c
		h.codecOrder = append(h.codecOrder, c.MediaType())
	}
	for pt, p := range opts.Patchers {
		h.patchers[pt] = p
	}
	h.tab.Store(newTable(cfg.Resources, nil))
	h.watchDefinitions()
	return h, nil
}

// newTable builds the table of the resources given, those a CustomResourceDefinition defines
// described by defined.
func newTable(resources []fakeapi.Resource, defined map[schema.GroupVersionResource]*definedResource) *table {
	builtin := map[schema.GroupVersionResource]bool{}
	for _, r := range fakeapi.BuiltinResources() {
		builtin[r.GVR] = true
	}
	tb := &table{byGV: map[schema.GroupVersion]*groupVersion{}}
	add := func(res *resource) {
		gv := res.GVR.GroupVersion()
		g := tb.byGV[gv]
		if g == nil {
			g = &groupVersion{gv: gv, resources: map[string]*resource{}}
			tb.byGV[gv] = g
			if gv.Group != "" && !slices.Contains(tb.groups, gv.Group) {
				tb.groups = append(tb.groups, gv.Group)
			}
		}
		if g.resources[res.GVR.Resource] != nil {
			return // a view that would shadow a resource of the configuration
		}
		g.resources[res.GVR.Resource] = res
		g.ordered = append(g.ordered, res)
	}
	coreEvents := false
	for _, r := range resources {
		coreEvents = coreEvents || (r.GVR == coreEventsGVR && builtin[r.GVR])
	}
	for _, r := range resources {
		res := &resource{Resource: r, builtin: builtin[r.GVR], defined: defined[r.GVR]}
		if r.GVR == newEventsGVR && res.builtin && coreEvents {
			res.store, res.conv = coreEventsGVR, eventConversion // one store for both (events.go)
		}
		add(res)
	}
	for _, r := range resources {
		if d := defined[r.GVR]; d != nil {
			for _, v := range d.views {
				add(&resource{Resource: v, defined: d, store: r.GVR})
			}
		}
	}
	for _, g := range tb.byGV {
		slices.SortFunc(g.ordered, func(a, b *resource) int { return strings.Compare(a.GVR.Resource, b.GVR.Resource) })
	}
	slices.SortFunc(tb.groups, func(a, b string) int {
		if pa, pb := groupPriority(a), groupPriority(b); pa != pb {
			return pb - pa
		}
		return strings.Compare(a, b)
	})
	return tb
}

// groupPriorities order the built-in groups in /apis as kube-apiserver orders them (the
// groupPriorityMinimum of their APIServices, highest first; ties by name). Every other group,
// a custom resource's, has kube-apiserver's priority for CustomResourceDefinition groups.
var groupPriorities = map[string]int{
	"apiregistration.k8s.io": 18000, "apps": 17800, "events.k8s.io": 17750, "authentication.k8s.io": 17700,
	"authorization.k8s.io": 17600, "autoscaling": 17500, "batch": 17400, "certificates.k8s.io": 17300,
	"networking.k8s.io": 17200, "policy": 17100, "rbac.authorization.k8s.io": 17000, "storage.k8s.io": 16800,
	"admissionregistration.k8s.io": 16700, "apiextensions.k8s.io": 16700, "scheduling.k8s.io": 16600,
	"coordination.k8s.io": 16500, "node.k8s.io": 16300, "discovery.k8s.io": 16200,
	"flowcontrol.apiserver.k8s.io": 16100, "resource.k8s.io": 15900,
}

// customGroupPriority is the groupPriorityMinimum kube-apiserver gives a custom resource's group.
const customGroupPriority = 1000

func groupPriority(group string) int {
	if p, ok := groupPriorities[group]; ok {
		return p
	}
	return customGroupPriority
}

// table returns the table served now, after bringing it up to date with the
// CustomResourceDefinitions written since it was built.
func (h *Handler) table() *table {
	h.syncDefinitions()
	return h.tab.Load()
}

// target is what a resource path names.
type target struct {
	res       *resource
	namespace string // "" for cluster-scoped resources and for lists across namespaces
	name      string
	sub       string // "", "status" or "scale"
}

// bodyKind is the kind of the objects a request on t reads and writes: the resource's, or
// autoscaling/v1 Scale on the scale subresource.
func (t target) bodyKind() schema.GroupVersionKind {
	if t.sub == "scale" {
		return scaleGVK
	}
	return t.res.GVR.GroupVersion().WithKind(t.res.Kind)
}

// ServeHTTP routes one request: discovery, version and health endpoints, then resource paths of
// the forms /api/v1/R[/NAME[/status]], /api/v1/namespaces/NS/R[/NAME[/status]] and the same
// under /apis/GROUP/VERSION.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if slices.Contains(segs, "") {
		if r.URL.Path == "/" && r.Method == http.MethodGet {
			h.writeJSON(w, http.StatusOK, map[string]any{"paths": []string{"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"}})
			return
		}
		writeError(w, errNotFound())
		return
	}
	switch segs[0] {
	case "healthz", "livez", "readyz":
		if len(segs) == 1 && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("ok"))
			return
		}
	case "version":
		if len(segs) == 1 && r.Method == http.MethodGet {
			h.writeJSON(w, http.StatusOK, version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.0-informersim", Platform: "informersim/fakeapi"})
			return
		}
	case "openapi":
		if len(segs) >= 2 && segs[1] == "v3" {
			h.serveOpenAPI(w, r, segs[2:])
			return
		}
		if len(segs) == 2 && segs[1] == "v2" && h.openAPI != nil {
			h.serveOpenAPIv2(w, r)
			return
		}
	case "api":
		switch {
		case len(segs) == 1 && r.Method == http.MethodGet && wantsAggregated(r.Header.Get("Accept")):
			h.aggregatedDiscovery(w, true)
			return
		case len(segs) == 1:
			h.discovery(w, r, h.apiVersions(r))
			return
		case len(segs) >= 2:
			h.serveGroupVersion(w, r, schema.GroupVersion{Version: segs[1]}, segs[2:])
			return
		}
	case "apis":
		switch len(segs) {
		case 1:
			if r.Method == http.MethodGet && wantsAggregated(r.Header.Get("Accept")) {
				h.aggregatedDiscovery(w, false)
				return
			}
			h.discovery(w, r, h.table().apiGroupList())
			return
		case 2:
			if g, ok := h.table().apiGroup(segs[1]); ok {
				h.discovery(w, r, g)
				return
			}
		default:
			h.serveGroupVersion(w, r, schema.GroupVersion{Group: segs[1], Version: segs[2]}, segs[3:])
			return
		}
	}
	writeError(w, errNotFound())
}

// serveGroupVersion serves the discovery document of gv (rest empty) or one of its resources.
func (h *Handler) serveGroupVersion(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion, rest []string) {
	g := h.table().byGV[gv]
	if g == nil {
		writeError(w, errNotFound())
		return
	}
	if len(rest) == 0 {
		h.discovery(w, r, apiResourceList(g))
		return
	}
	t, ok := g.parse(rest)
	if !ok {
		writeError(w, errNotFound())
		return
	}
	h.serveResource(w, r, t)
}

// parse resolves the path segments after /api/v1 or /apis/G/V. A namespaced path is
// namespaces/NS/R...; namespaces/NAME[/status] itself addresses the cluster-scoped namespaces
// resource, which is why the third segment must name a namespaced resource of this version.
func (g *groupVersion) parse(segs []string) (target, bool) {
	var t target
	namespaced := false
	if len(segs) >= 3 && segs[0] == "namespaces" {
		if res, ok := g.resources[segs[2]]; ok && res.Namespaced {
			t.namespace, segs, namespaced = segs[1], segs[2:], true
		}
	}
	res, ok := g.resources[segs[0]]
	if !ok || len(segs) > 3 {
		return t, false
	}
	t.res = res
	if len(segs) >= 2 {
		t.name = segs[1]
		// A namespaced object is addressed only through its namespace (no /api/v1/pods/NAME).
		if res.Namespaced && !namespaced {
			return t, false
		}
	}
	if len(segs) == 3 {
		switch {
		case segs[2] == "status" && res.Status:
		case segs[2] == "scale" && res.Scale != nil:
		default:
			return t, false
		}
		t.sub = segs[2]
	}
	return t, true
}

// discovery answers GET for a legacy discovery document in JSON. /api and /apis also serve the
// aggregated format to clients that ask for it first (aggregated.go).
func (h *Handler) discovery(w http.ResponseWriter, r *http.Request, doc any) {
	if r.Method != http.MethodGet {
		writeError(w, errMethodNotAllowed(r.Method))
		return
	}
	h.writeJSON(w, http.StatusOK, doc)
}

func (h *Handler) apiVersions(r *http.Request) *metav1.APIVersions {
	v := &metav1.APIVersions{
		TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
	}
	for gv := range h.table().byGV {
		if gv.Group == "" {
			v.Versions = append(v.Versions, gv.Version)
		}
	}
	slices.SortFunc(v.Versions, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
	return v
}

// versionsOf returns the versions served for group, preferred (highest, Kubernetes-aware) first.
func (tb *table) versionsOf(group string) []metav1.GroupVersionForDiscovery {
	var vs []metav1.GroupVersionForDiscovery
	for gv := range tb.byGV {
		if gv.Group == group {
			vs = append(vs, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version})
		}
	}
	slices.SortFunc(vs, func(a, b metav1.GroupVersionForDiscovery) int {
		return -version.CompareKubeAwareVersionStrings(a.Version, b.Version)
	})
	return vs
}

func (tb *table) apiGroup(name string) (*metav1.APIGroup, bool) {
	vs := tb.versionsOf(name)
	if name == "" || len(vs) == 0 {
		return nil, false
	}
	return &metav1.APIGroup{
		TypeMeta:         metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:             name,
		Versions:         vs,
		PreferredVersion: vs[0],
	}, true
}

func (tb *table) apiGroupList() *metav1.APIGroupList {
	l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, name := range tb.groups {
		g, _ := tb.apiGroup(name)
		g.TypeMeta = metav1.TypeMeta{}
		l.Groups = append(l.Groups, *g)
	}
	return l
}

// allVerbs are the verbs every fakeapi resource supports; statusVerbs those of /status.
var (
	allVerbs    = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs = metav1.Verbs{"get", "patch", "update"}
)

func apiResourceList(g *groupVersion) *metav1.APIResourceList {
	l := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: g.gv.String(),
		APIResources: []metav1.APIResource{},
	}
	for _, res := range g.ordered {
		ar := metav1.APIResource{
			Name:         res.GVR.Resource,
			SingularName: strings.ToLower(res.Kind),
			Namespaced:   res.Namespaced,
			Kind:         res.Kind,
			Verbs:        allVerbs,
		}
		ar.ShortNames, ar.Categories = res.ShortNames, res.Categories
		if res.defined != nil {
			ar.SingularName = res.defined.singular
		}
		l.APIResources = append(l.APIResources, ar)
		if res.Scale != nil {
			l.APIResources = append(l.APIResources, metav1.APIResource{
				Name:       res.GVR.Resource + "/scale",
				Namespaced: res.Namespaced,
				Group:      scaleGVK.Group,
				Version:    scaleGVK.Version,
				Kind:       scaleGVK.Kind,
				Verbs:      statusVerbs,
			})
		}
		if res.Status {
			l.APIResources = append(l.APIResources, metav1.APIResource{
				Name:       res.GVR.Resource + "/status",
				Namespaced: res.Namespaced,
				Kind:       res.Kind,
				Verbs:      statusVerbs,
			})
		}
	}
	return l
}

// errNotFound is the 404 kube-apiserver gives for a path no route matches.
func errNotFound() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

// errMethodNotAllowed is the 405 for a method a path does not serve.
func errMethodNotAllowed(method string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusMethodNotAllowed,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Message: fmt.Sprintf("the server does not allow this method on the requested resource (%s)", method),
		Details: &metav1.StatusDetails{},
	}}
}
