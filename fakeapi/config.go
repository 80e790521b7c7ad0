package fakeapi

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// Defaults of [Config]. Each limit is a Config field; a zero value selects the default below and a
// negative value (for durations) disables the behaviour where the field's doc says so.
const (
	// DefaultCompactionInterval mirrors kube-apiserver's --etcd-compaction-interval (fakeapi.md §2).
	DefaultCompactionInterval = 5 * time.Minute
	// DefaultBookmarkInterval mirrors the cacher's defaultBookmarkFrequency (fakeapi.md §4.5).
	DefaultBookmarkInterval = time.Minute
	// DefaultBookmarkBeforeDeadline is how long before a watch deadline the last bookmark goes out (§4.5).
	DefaultBookmarkBeforeDeadline = 2 * time.Second
	// DefaultMinRequestTimeout mirrors --min-request-timeout=1800s (fakeapi.md §4.6 row 1).
	DefaultMinRequestTimeout = 30 * time.Minute
	// DefaultResourceVersionWait is the cacher's blockTimeout for NotOlderThan reads (§3.4).
	DefaultResourceVersionWait = 3 * time.Second
	// DefaultMaxWatchEvents is the per-watch buffer; beyond it the watch is closed as a slow
	// consumer (fakeapi.md §4.6, k/k#125123).
	DefaultMaxWatchEvents = 1000
	// DefaultMaxCacheHistoryEvents is the upper bound of the cacher's history ring (§4.7).
	DefaultMaxCacheHistoryEvents = 102400
	// DefaultMaxLogEntries bounds the store's event log; beyond it the oldest entries are
	// compacted away even between compaction ticks, so memory never grows without bound.
	DefaultMaxLogEntries = 1 << 20
	// DefaultMaxRecords bounds each of the request and event records (oldest dropped first).
	DefaultMaxRecords = 100000
	// DefaultGenerateNameAttempts mirrors RetryGenerateName: 8 attempts in total (§5.1).
	DefaultGenerateNameAttempts = 8
	// DefaultMaxObjects bounds the number of live objects; creates beyond it get 429 (a
	// quota-like refusal rather than unbounded growth).
	DefaultMaxObjects = 1 << 22
)

// WatchTimeoutPolicy says how the server picks a watch's deadline (fakeapi.md §6 F-12).
type WatchTimeoutPolicy int

const (
	// WatchTimeoutHonor uses the client's timeoutSeconds when set, else a seeded draw in
	// [MinRequestTimeout, 2*MinRequestTimeout), like kube-apiserver (§4.6 row 1).
	WatchTimeoutHonor WatchTimeoutPolicy = iota + 1
	// WatchTimeoutServer ignores the client's timeoutSeconds (it is still recorded) and always
	// draws from the seeded range, so nothing observable depends on a client's global rand (§10.2).
	WatchTimeoutServer
	// WatchTimeoutNone never closes watches on a deadline.
	WatchTimeoutNone
)

func (p WatchTimeoutPolicy) String() string {
	switch p {
	case WatchTimeoutHonor:
		return "Honor"
	case WatchTimeoutServer:
		return "Server"
	case WatchTimeoutNone:
		return "None"
	}
	return fmt.Sprintf("WatchTimeoutPolicy(%d)", int(p))
}

// RoutingPolicy decides which replica serves a list or watch (fakeapi.md §6 F-4).
type RoutingPolicy int

const (
	// RoutingPrimary sends every request to replica 0.
	RoutingPrimary RoutingPolicy = iota + 1
	// RoutingRoundRobin cycles through the replicas in index order.
	RoutingRoundRobin
	// RoutingRandom draws the replica from the injected random source.
	RoutingRandom
)

func (p RoutingPolicy) String() string {
	switch p {
	case RoutingPrimary:
		return "Primary"
	case RoutingRoundRobin:
		return "RoundRobin"
	case RoutingRandom:
		return "Random"
	}
	return fmt.Sprintf("RoutingPolicy(%d)", int(p))
}

// Resource describes one served resource: its GroupVersionResource, Kind and scope, plus the
// per-kind switches of fakeapi.md §5.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
	// Status says the resource has a /status subresource: writes to the main resource keep the
	// stored .status and UpdateStatus changes only .status (fakeapi.md §5.5).
	Status bool
	// Generation says metadata.generation is tracked: 1 on create, +1 on each spec change.
	Generation bool
	// RequireResourceVersion makes an update without metadata.resourceVersion a 422, as for
	// custom resources (fakeapi.md §5.2). Built-in kinds allow unconditional updates.
	RequireResourceVersion bool
	// GracefulDelete models pods: a delete of a scheduled object sets deletionTimestamp to now
	// plus the grace period and keeps it until a delete with grace 0 (fakeapi.md §5.3).
	GracefulDelete bool
	// FieldLabels are the field-selector fields beyond metadata.name and metadata.namespace,
	// as dotted paths into the object (fakeapi.md §4.4). Others are answered with 400.
	FieldLabels []string
	// Names is the name rule checked on create (fakeapi.md §5.1); zero means DNS-1123 subdomain.
	Names NameRule
	// OrphanByDefault makes a delete that names no propagation policy (and no orphanDependents)
	// orphan the object's dependents, as kube-apiserver's DefaultGarbageCollectionPolicy does for
	// the older workload versions (extensions/v1beta1, apps/v1beta1 and apps/v1beta2). False,
	// every served kind's default, means background deletion (fakeapi.md §5.3).
	OrphanByDefault bool
	// Scale, when set, gives the resource a scale subresource (autoscaling/v1 Scale), served by
	// the REST front: the paths of the replica counts and of the label selector in the object,
	// as a CustomResourceDefinition declares them (fakeapi.md §5.8).
	Scale *ScaleSubresource
	// DeleteFinalizers are finalizers the first delete of an object adds before it marks the
	// object deleting, so that it stays until someone removes them: kube-apiserver's storage of
	// CustomResourceDefinitions adds customresourcecleanup.apiextensions.k8s.io, which its
	// finalizer removes once the custom resources are gone.
	DeleteFinalizers []string
	// ShortNames and Categories are what discovery lists for the resource (`kubectl get cm`,
	// `kubectl get all`), kube-apiserver's for the built-in kinds.
	ShortNames []string
	Categories []string
}

// ScaleSubresource locates what a Scale reads and writes in an object, as JSON paths of the
// form ".spec.replicas" (a CustomResourceDefinition's subresources.scale).
type ScaleSubresource struct {
	// SpecReplicasPath is the desired count, which a Scale update writes (required).
	SpecReplicasPath string
	// StatusReplicasPath is the observed count (required; absent in an object means 0).
	StatusReplicasPath string
	// LabelSelectorPath is the selector, optional: a string in label-selector syntax, or for the
	// built-in workloads a metav1.LabelSelector object (".spec.selector"), which the Scale
	// reports in its string form.
	LabelSelectorPath string
}

// NameRule is the validation applied to metadata.name.
type NameRule int

const (
	// NameSubdomain is a DNS-1123 subdomain (most kinds).
	NameSubdomain NameRule = iota + 1
	// NameLabel is a DNS-1123 label (namespaces).
	NameLabel
	// NameLabel1035 is a DNS-1035 label (services).
	NameLabel1035
)

func (r NameRule) String() string {
	switch r {
	case NameSubdomain:
		return "Subdomain"
	case NameLabel:
		return "Label"
	case NameLabel1035:
		return "Label1035"
	}
	return fmt.Sprintf("NameRule(%d)", int(r))
}

// Config configures a [Server]. The zero value is valid: a real clock, a fixed seed, one replica,
// the built-in resources, and the defaults named on each field.
type Config struct {
	// Clock is read for timestamps and deadlines; the server never sleeps or starts timers on
	// it. Nil means clock.RealClock{}. If it also implements clock.Clock, the channel adapter
	// behind ResultChan uses its timers to call Advance lazily.
	Clock clock.PassiveClock
	// Rand is the only source of randomness (UIDs, generateName suffixes, deadlines, routing).
	// Nil means rand.New(rand.NewPCG(1, 2)). The server owns it after New.
	Rand *rand.Rand
	// Resources are served in addition to the built-in table (see [BuiltinResources]); an entry
	// with the GVR of a built-in one replaces it.
	Resources []Resource

	// CompactionInterval is the period of the etcd-like compactor, which compacts to the
	// revision it saw on its previous tick (fakeapi.md §2). Zero means
	// DefaultCompactionInterval; negative disables periodic compaction (Compact still works).
	CompactionInterval time.Duration
	// MaxLogEntries bounds the event log. Zero means DefaultMaxLogEntries.
	MaxLogEntries int
	// MaxCacheHistoryEvents bounds each replica's watch-cache history (§4.7): watches from an
	// RV older than what the ring still holds get 410. Zero means DefaultMaxCacheHistoryEvents.
	MaxCacheHistoryEvents int
	// MaxObjects bounds the live objects. Zero means DefaultMaxObjects.
	MaxObjects int

	// Replicas is the number of simulated apiservers, each with its own watch cache
	// (fakeapi.md MH-12). Zero means 1.
	Replicas int
	// Routing picks the replica for each list and watch. Zero means RoutingPrimary.
	Routing RoutingPolicy

	// WatchTimeout is the deadline policy for watches. Zero means WatchTimeoutHonor.
	WatchTimeout WatchTimeoutPolicy
	// MinRequestTimeout is kube-apiserver's --min-request-timeout. Zero means
	// DefaultMinRequestTimeout.
	MinRequestTimeout time.Duration
	// BookmarkInterval is the period of ordinary bookmarks on watches that allow them. Zero
	// means DefaultBookmarkInterval; negative disables periodic bookmarks.
	BookmarkInterval time.Duration
	// BookmarkBeforeDeadline sends one bookmark this long before a watch's deadline. Zero means
	// DefaultBookmarkBeforeDeadline; negative disables it.
	BookmarkBeforeDeadline time.Duration
	// ResourceVersionWait is how long a cache-served request waits for a lagging cache to reach
	// the requested RV before 504 (§3.4). Zero means DefaultResourceVersionWait.
	ResourceVersionWait time.Duration
	// MaxWatchEvents is the per-watch buffer; a watch whose undelivered events exceed it is
	// closed cleanly as a slow consumer. Zero means DefaultMaxWatchEvents.
	MaxWatchEvents int
	// ExpiredWatchAsError makes a watch from a too-old RV fail in Watch() itself with 410
	// instead of the default HTTP-200 stream with one ERROR event (fakeapi.md MH-4).
	ExpiredWatchAsError bool
	// MaxRecords bounds the request record and the event record. Zero means DefaultMaxRecords;
	// negative disables recording.
	MaxRecords int
	// GenerateNameAttempts is the number of names tried for generateName. Zero means
	// DefaultGenerateNameAttempts.
	GenerateNameAttempts int
	// RequireNamespaces refuses a create or an update of a namespaced object whose namespace
	// does not exist with kube-apiserver's 404 (namespaces "x" not found), as its
	// NamespaceLifecycle admission plugin does (fakeapi.md §5.3). Off, writes may name a
	// namespace nobody created, as a simulation's writers do. A server standing for a cluster
	// (informersim serve, the clientgo harness) turns it on and creates the system namespaces
	// (package fakeapi/rest: EnsureNamespaces).
	RequireNamespaces bool
	// ServiceCIDR, when set, is the cluster's service range (an IPv4 or IPv6 CIDR, at most
	// /64 for IPv6, as kube-apiserver's --service-cluster-ip-range): Services get cluster IPs
	// from it as kube-apiserver allocates them (serviceips.go, fakeapi.md §5.10), drawn from
	// Rand. "" stores Services as written, as a simulation's writers want. A server standing for
	// a cluster sets DefaultServiceCIDR (envtest's) or the range it was given.
	ServiceCIDR string
}

// CustomResourceDefinitionsGVR is the resource of CustomResourceDefinitions, which the fake
// apiserver stores as any other; the REST front (fakeapi/rest) serves what they define.
var CustomResourceDefinitionsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CustomResourceCleanupFinalizer is the finalizer a CustomResourceDefinition's delete adds: it
// stays until the definition's custom resources are deleted.
const CustomResourceCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// BuiltinResources returns the built-in resource table, a fresh copy on each call: every
// resource of the API groups kube-apiserver v1.37 serves by default that clients read and write
// as objects (not the create-only reviews of authentication.k8s.io and authorization.k8s.io, nor
// componentstatuses), with its scope, status and scale subresources, generation tracking, the
// field selectors beyond metadata.name and metadata.namespace, short names and categories. The
// table in docs/builtin-kinds.md is generated from it (TestBuiltinKindsTable).
func BuiltinResources() []Resource {
	gvr := func(group, version, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
	}
	core := func(r string) schema.GroupVersionResource { return gvr("", "v1", r) }
	apps := func(r string) schema.GroupVersionResource { return gvr("apps", "v1", r) }
	workloadScale := func() *ScaleSubresource {
		return &ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".spec.selector"}
	}
	all := []string{"all"}
	extensions := []string{"api-extensions"}
	return []Resource{
		// core/v1
		{GVR: core("pods"), Kind: "Pod", Namespaced: true, Status: true, Generation: true, GracefulDelete: true, ShortNames: []string{"po"}, Categories: all,
			FieldLabels: []string{"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}},
		{GVR: core("configmaps"), Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}},
		{GVR: core("secrets"), Kind: "Secret", Namespaced: true, FieldLabels: []string{"type"}},
		{GVR: core("services"), Kind: "Service", Namespaced: true, Status: true, Names: NameLabel1035, ShortNames: []string{"svc"}, Categories: all,
			FieldLabels: []string{"spec.clusterIP", "spec.type"}},
		{GVR: core("nodes"), Kind: "Node", Status: true, FieldLabels: []string{"spec.unschedulable"}, ShortNames: []string{"no"}},
		{GVR: core("namespaces"), Kind: "Namespace", Status: true, Names: NameLabel, FieldLabels: []string{"status.phase"}, ShortNames: []string{"ns"}},
		{GVR: core("endpoints"), Kind: "Endpoints", Namespaced: true, ShortNames: []string{"ep"}},
		{GVR: core("limitranges"), Kind: "LimitRange", Namespaced: true, ShortNames: []string{"limits"}},
		{GVR: core("persistentvolumeclaims"), Kind: "PersistentVolumeClaim", Namespaced: true, Status: true, ShortNames: []string{"pvc"}},
		{GVR: core("persistentvolumes"), Kind: "PersistentVolume", Status: true, ShortNames: []string{"pv"}},
		{GVR: core("podtemplates"), Kind: "PodTemplate", Namespaced: true},
		{GVR: core("replicationcontrollers"), Kind: "ReplicationController", Namespaced: true, Status: true, Generation: true, ShortNames: []string{"rc"}, Categories: all,
			FieldLabels: []string{"status.replicas"},
			Scale:       &ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".spec.selector"}},
		{GVR: core("resourcequotas"), Kind: "ResourceQuota", Namespaced: true, Status: true, ShortNames: []string{"quota"}},
		{GVR: core("serviceaccounts"), Kind: "ServiceAccount", Namespaced: true, ShortNames: []string{"sa"}},
		// Events, which clients write (client-go's event recorders) and read (kubectl describe).
		// kube-apiserver keeps the two versions in one store, and so does the REST front (it serves
		// events.k8s.io/v1 from core/v1's: fakeapi/rest/events.go); in process they are two
		// collections.
		{GVR: core("events"), Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}, FieldLabels: []string{
			"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
			"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
			"reason", "reportingComponent", "type"}},
		{GVR: gvr("events.k8s.io", "v1", "events"), Kind: "Event", Namespaced: true, ShortNames: []string{"ev"},
			FieldLabels: []string{"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "reason", "type"}},
		// apps/v1
		{GVR: apps("deployments"), Kind: "Deployment", Namespaced: true, Status: true, Generation: true, Scale: workloadScale(), ShortNames: []string{"deploy"}, Categories: all},
		{GVR: apps("replicasets"), Kind: "ReplicaSet", Namespaced: true, Status: true, Generation: true, FieldLabels: []string{"status.replicas"}, Scale: workloadScale(), ShortNames: []string{"rs"}, Categories: all},
		{GVR: apps("statefulsets"), Kind: "StatefulSet", Namespaced: true, Status: true, Generation: true, Scale: workloadScale(), ShortNames: []string{"sts"}, Categories: all},
		{GVR: apps("daemonsets"), Kind: "DaemonSet", Namespaced: true, Status: true, Generation: true, ShortNames: []string{"ds"}, Categories: all},
		{GVR: apps("controllerrevisions"), Kind: "ControllerRevision", Namespaced: true},
		// batch/v1
		{GVR: gvr("batch", "v1", "jobs"), Kind: "Job", Namespaced: true, Status: true, Generation: true, Categories: all, FieldLabels: []string{"status.successful"}},
		{GVR: gvr("batch", "v1", "cronjobs"), Kind: "CronJob", Namespaced: true, Status: true, Generation: true, ShortNames: []string{"cj"}, Categories: all},
		// autoscaling: kube-apiserver stores v1 and v2 in one store and converts between them;
		// here they are two collections.
		{GVR: gvr("autoscaling", "v2", "horizontalpodautoscalers"), Kind: "HorizontalPodAutoscaler", Namespaced: true, Status: true, ShortNames: []string{"hpa"}, Categories: all},
		{GVR: gvr("autoscaling", "v1", "horizontalpodautoscalers"), Kind: "HorizontalPodAutoscaler", Namespaced: true, Status: true, ShortNames: []string{"hpa"}, Categories: all},
		// coordination.k8s.io/v1
		{GVR: gvr("coordination.k8s.io", "v1", "leases"), Kind: "Lease", Namespaced: true},
		// rbac.authorization.k8s.io/v1
		{GVR: gvr("rbac.authorization.k8s.io", "v1", "roles"), Kind: "Role", Namespaced: true},
		{GVR: gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), Kind: "RoleBinding", Namespaced: true},
		{GVR: gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), Kind: "ClusterRole"},
		{GVR: gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), Kind: "ClusterRoleBinding"},
		// networking.k8s.io/v1
		{GVR: gvr("networking.k8s.io", "v1", "ingresses"), Kind: "Ingress", Namespaced: true, Status: true, ShortNames: []string{"ing"}},
		{GVR: gvr("networking.k8s.io", "v1", "ingressclasses"), Kind: "IngressClass"},
		{GVR: gvr("networking.k8s.io", "v1", "networkpolicies"), Kind: "NetworkPolicy", Namespaced: true, Generation: true, ShortNames: []string{"netpol"}},
		{GVR: gvr("networking.k8s.io", "v1", "ipaddresses"), Kind: "IPAddress", ShortNames: []string{"ip"}},
		{GVR: gvr("networking.k8s.io", "v1", "servicecidrs"), Kind: "ServiceCIDR", Status: true},
		// discovery.k8s.io/v1
		{GVR: gvr("discovery.k8s.io", "v1", "endpointslices"), Kind: "EndpointSlice", Namespaced: true,
			FieldLabels: []string{"addressType"}},
		// policy/v1
		{GVR: gvr("policy", "v1", "poddisruptionbudgets"), Kind: "PodDisruptionBudget", Namespaced: true, Status: true, Generation: true, ShortNames: []string{"pdb"}},
		// storage.k8s.io/v1
		{GVR: gvr("storage.k8s.io", "v1", "storageclasses"), Kind: "StorageClass", ShortNames: []string{"sc"}},
		{GVR: gvr("storage.k8s.io", "v1", "csidrivers"), Kind: "CSIDriver"},
		{GVR: gvr("storage.k8s.io", "v1", "csinodes"), Kind: "CSINode"},
		{GVR: gvr("storage.k8s.io", "v1", "csistoragecapacities"), Kind: "CSIStorageCapacity", Namespaced: true},
		{GVR: gvr("storage.k8s.io", "v1", "volumeattachments"), Kind: "VolumeAttachment", Status: true},
		{GVR: gvr("storage.k8s.io", "v1", "volumeattributesclasses"), Kind: "VolumeAttributesClass", ShortNames: []string{"vac"}},
		// certificates.k8s.io/v1
		{GVR: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), Kind: "CertificateSigningRequest", Status: true, ShortNames: []string{"csr"},
			FieldLabels: []string{"spec.signerName"}},
		// admissionregistration.k8s.io/v1
		{GVR: gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"), Kind: "MutatingWebhookConfiguration", Categories: extensions},
		{GVR: gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), Kind: "ValidatingWebhookConfiguration", Categories: extensions},
		{GVR: gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), Kind: "ValidatingAdmissionPolicy", Status: true, Generation: true, Categories: extensions},
		{GVR: gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings"), Kind: "ValidatingAdmissionPolicyBinding", Categories: extensions},
		// apiextensions.k8s.io/v1 and apiregistration.k8s.io/v1
		{GVR: CustomResourceDefinitionsGVR, Kind: "CustomResourceDefinition", Status: true, Generation: true,
			DeleteFinalizers: []string{CustomResourceCleanupFinalizer}, ShortNames: []string{"crd", "crds"}, Categories: extensions},
		{GVR: gvr("apiregistration.k8s.io", "v1", "apiservices"), Kind: "APIService", Status: true, Categories: extensions},
		// scheduling.k8s.io/v1, node.k8s.io/v1
		{GVR: gvr("scheduling.k8s.io", "v1", "priorityclasses"), Kind: "PriorityClass", ShortNames: []string{"pc"}},
		{GVR: gvr("node.k8s.io", "v1", "runtimeclasses"), Kind: "RuntimeClass"},
		// flowcontrol.apiserver.k8s.io/v1
		{GVR: gvr("flowcontrol.apiserver.k8s.io", "v1", "flowschemas"), Kind: "FlowSchema", Status: true},
		{GVR: gvr("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations"), Kind: "PriorityLevelConfiguration", Status: true},
		// resource.k8s.io/v1 (dynamic resource allocation)
		{GVR: gvr("resource.k8s.io", "v1", "deviceclasses"), Kind: "DeviceClass"},
		{GVR: gvr("resource.k8s.io", "v1", "resourceclaims"), Kind: "ResourceClaim", Namespaced: true, Status: true},
		{GVR: gvr("resource.k8s.io", "v1", "resourceclaimtemplates"), Kind: "ResourceClaimTemplate", Namespaced: true},
		{GVR: gvr("resource.k8s.io", "v1", "resourceslices"), Kind: "ResourceSlice",
			FieldLabels: []string{"spec.nodeName", "spec.driver"}},
	}
}

// validated returns a copy of c with defaults filled in, or an error naming the bad field.
func (c Config) validated() (Config, error) {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(1, 2))
	}
	if c.ServiceCIDR != "" {
		if _, err := parseServiceRange(c.ServiceCIDR); err != nil {
			return c, fmt.Errorf("fakeapi: ServiceCIDR %q: %v", c.ServiceCIDR, err)
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.CompactionInterval, DefaultCompactionInterval)
	def(&c.BookmarkInterval, DefaultBookmarkInterval)
	def(&c.BookmarkBeforeDeadline, DefaultBookmarkBeforeDeadline)
	def(&c.MinRequestTimeout, DefaultMinRequestTimeout)
	def(&c.ResourceVersionWait, DefaultResourceVersionWait)
	defInt(&c.MaxLogEntries, DefaultMaxLogEntries)
	defInt(&c.MaxCacheHistoryEvents, DefaultMaxCacheHistoryEvents)
	defInt(&c.MaxObjects, DefaultMaxObjects)
	defInt(&c.Replicas, 1)
	defInt(&c.MaxWatchEvents, DefaultMaxWatchEvents)
	defInt(&c.MaxRecords, DefaultMaxRecords)
	defInt(&c.GenerateNameAttempts, DefaultGenerateNameAttempts)
	if c.Routing == 0 {
		c.Routing = RoutingPrimary
	}
	if c.WatchTimeout == 0 {
		c.WatchTimeout = WatchTimeoutHonor
	}
	switch {
	case c.MinRequestTimeout < 0:
		return c, fmt.Errorf("fakeapi: MinRequestTimeout %v is negative", c.MinRequestTimeout)
	case c.ResourceVersionWait < 0:
		return c, fmt.Errorf("fakeapi: ResourceVersionWait %v is negative", c.ResourceVersionWait)
	case c.MaxLogEntries < 1, c.MaxCacheHistoryEvents < 1, c.MaxObjects < 1, c.MaxWatchEvents < 1:
		return c, fmt.Errorf("fakeapi: limits must be positive (MaxLogEntries %d, MaxCacheHistoryEvents %d, MaxObjects %d, MaxWatchEvents %d)",
			c.MaxLogEntries, c.MaxCacheHistoryEvents, c.MaxObjects, c.MaxWatchEvents)
	case c.Replicas < 1 || c.Replicas > 64:
		return c, fmt.Errorf("fakeapi: Replicas %d out of range [1, 64]", c.Replicas)
	case c.Routing < RoutingPrimary || c.Routing > RoutingRandom:
		return c, fmt.Errorf("fakeapi: unknown %v", c.Routing)
	case c.WatchTimeout < WatchTimeoutHonor || c.WatchTimeout > WatchTimeoutNone:
		return c, fmt.Errorf("fakeapi: unknown %v", c.WatchTimeout)
	case c.GenerateNameAttempts < 1:
		return c, fmt.Errorf("fakeapi: GenerateNameAttempts %d must be positive", c.GenerateNameAttempts)
	}
	// Merge the resource table: user entries replace built-ins of the same GVR.
	table := BuiltinResources()
	for _, r := range c.Resources {
		r, err := r.validated()
		if err != nil {
			return c, err
		}
		replaced := false
		for i := range table {
			if table[i].GVR == r.GVR {
				table[i], replaced = r, true
			}
		}
		if !replaced {
			table = append(table, r)
		}
	}
	for i := range table {
		if table[i].Names == 0 {
			table[i].Names = NameSubdomain
		}
	}
	c.Resources = table
	return c, nil
}

// validated returns a copy of r that shares nothing with it, its defaults filled in, or an error
// naming what is missing or malformed.
func (r Resource) validated() (Resource, error) {
	if r.GVR.Resource == "" || r.GVR.Version == "" || r.Kind == "" {
		return r, fmt.Errorf("fakeapi: resource %v needs a resource, a version and a kind", r.GVR)
	}
	if r.Names == 0 {
		r.Names = NameSubdomain
	}
	if r.Names < NameSubdomain || r.Names > NameLabel1035 {
		return r, fmt.Errorf("fakeapi: resource %v: unknown %v", r.GVR, r.Names)
	}
	r.FieldLabels = append([]string(nil), r.FieldLabels...)
	r.DeleteFinalizers = append([]string(nil), r.DeleteFinalizers...)
	r.ShortNames = append([]string(nil), r.ShortNames...)
	r.Categories = append([]string(nil), r.Categories...)
	if r.Scale != nil {
		sc := *r.Scale
		if err := sc.validate(); err != nil {
			return r, fmt.Errorf("fakeapi: resource %v: %w", r.GVR, err)
		}
		r.Scale = &sc
	}
	return r, nil
}

// validate checks the paths of a scale subresource: each of the form ".a.b", the two counts
// required.
func (sc ScaleSubresource) validate() error {
	check := func(name, p string, required bool) error {
		if p == "" && !required {
			return nil
		}
		if !strings.HasPrefix(p, ".") || slices.Contains(strings.Split(p[1:], "."), "") {
			return fmt.Errorf("scale %s %q: want a path of the form .spec.replicas", name, p)
		}
		return nil
	}
	if err := check("SpecReplicasPath", sc.SpecReplicasPath, true); err != nil {
		return err
	}
	if err := check("StatusReplicasPath", sc.StatusReplicasPath, true); err != nil {
		return err
	}
	return check("LabelSelectorPath", sc.LabelSelectorPath, false)
}
