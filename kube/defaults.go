package kube

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kube-apiserver fills in defaults when it decodes an object of a built-in kind, on every write
// (create, update, and the result of a patch). Its defaulting functions live in
// k8s.io/kubernetes (pkg/apis/<group>/v1/defaults.go), which this module does not import: the
// ones below are written after them, for the kinds controllers write most, on fakeapi's
// unstructured form (integers are int64, as decoded JSON gives them). Each sets a field only
// where the object leaves it unset, so applying them again changes nothing. What defaults depend
// on state the fake does not keep (a Job's generated selector, which needs its uid; a Service's
// allocated cluster IPs) or on admission plugins (a Pod's priority, tolerations and service
// account) is not done.

// defaulters are the defaulting functions by kind.
var defaulters = map[schema.GroupVersionKind]func(obj map[string]any){
	{Version: "v1", Kind: "Pod"}: func(o map[string]any) {
		if spec := child(o, "spec"); spec != nil {
			defaultPodSpec(spec)
			// SetDefaults_Pod's, not the pod spec's: templates do not get it.
			setDefault(spec, "enableServiceLinks", true)
			defaultRequestsFromLimits(spec)
		}
	},
	{Version: "v1", Kind: "PodTemplate"}:           func(o map[string]any) { defaultTemplate(o, "template") },
	{Version: "v1", Kind: "ReplicationController"}: defaultReplicationController,
	{Version: "v1", Kind: "Service"}:               defaultService,
	{Version: "v1", Kind: "Secret"}: func(o map[string]any) {
		setDefault(o, "type", "Opaque")
	},
	{Version: "v1", Kind: "PersistentVolumeClaim"}: func(o map[string]any) {
		if spec := child(o, "spec"); spec != nil {
			setDefault(spec, "volumeMode", "Filesystem")
		}
	},
	{Group: "apps", Version: "v1", Kind: "Deployment"}:  defaultDeployment,
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}:  defaultReplicaSet,
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: defaultStatefulSet,
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:   defaultDaemonSet,
	{Group: "batch", Version: "v1", Kind: "Job"}: func(o map[string]any) {
		if spec := child(o, "spec"); spec != nil {
			defaultJobSpec(spec)
			defaultTemplate(spec, "template")
		}
	},
	{Group: "batch", Version: "v1", Kind: "CronJob"}:                                defaultCronJob,
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}:        defaultBinding,
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}: defaultBinding,
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}: func(o map[string]any) {
		maps(o, "webhooks", func(w map[string]any) {
			defaultWebhook(w)
			setDefault(w, "reinvocationPolicy", "Never")
		})
	},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}: func(o map[string]any) {
		maps(o, "webhooks", defaultWebhook)
	},
}

// defaultWebhook applies admissionregistration/v1's defaults to one webhook of a configuration:
// failurePolicy Fail, matchPolicy Equivalent, selectors that select everything, a 10 s timeout,
// each rule's scope "*", a service reference's port 443. sideEffects and
// admissionReviewVersions have no default in v1 (they are required).
func defaultWebhook(w map[string]any) {
	setDefault(w, "failurePolicy", "Fail")
	setDefault(w, "matchPolicy", "Equivalent")
	setDefault(w, "namespaceSelector", map[string]any{})
	setDefault(w, "objectSelector", map[string]any{})
	setDefault(w, "timeoutSeconds", int64(10))
	maps(w, "rules", func(r map[string]any) { setDefault(r, "scope", "*") })
	if cc := child(w, "clientConfig"); cc != nil {
		if svc := child(cc, "service"); svc != nil {
			setDefault(svc, "port", int64(443))
		}
	}
}

// Default applies to obj, an object of a built-in kind in unstructured form, the defaults
// kube-apiserver gives that kind on a write (those the REST front gives too): for an object
// stored without going through the front (a world's op), read by code that expects what
// kube-apiserver stores (package kube/webhooks reads webhook configurations so).
func Default(obj map[string]any) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return
	}
	defaultBuiltin(gv.WithKind(kind), obj)
}

// defaultBuiltin applies kube-apiserver's defaults of gvk to obj, if it has any.
func defaultBuiltin(gvk schema.GroupVersionKind, obj map[string]any) {
	if f := defaulters[gvk]; f != nil {
		f(obj)
	}
}

// child returns the map at key of m, or nil if there is none (or it is not a map).
func child(m map[string]any, key string) map[string]any {
	c, _ := m[key].(map[string]any)
	return c
}

// ensureChild returns the map at key of m, creating an empty one if the key is unset (a struct
// field kube-apiserver's Go types always have).
func ensureChild(m map[string]any, key string) map[string]any {
	if c, ok := m[key].(map[string]any); ok {
		return c
	}
	if v, ok := m[key]; ok && v != nil {
		return nil // not a map: the type check refuses the object, nothing to default
	}
	c := map[string]any{}
	m[key] = c
	return c
}

// setDefault sets m[key] to v when it is unset or null (nil pointers of the Go types), and for
// strings also when empty (kube-apiserver's defaulters test strings against "").
func setDefault(m map[string]any, key string, v any) {
	switch cur, ok := m[key]; {
	case !ok || cur == nil:
		m[key] = v
	case cur == "":
		if _, isString := v.(string); isString {
			m[key] = v
		}
	}
}

// maps calls f with each map element of the list at key of m.
func maps(m map[string]any, key string, f func(map[string]any)) {
	l, _ := m[key].([]any)
	for _, e := range l {
		if em, ok := e.(map[string]any); ok {
			f(em)
		}
	}
}

// defaultTemplate defaults the pod template at key of m (its spec).
func defaultTemplate(m map[string]any, key string) {
	if t := child(m, key); t != nil {
		if spec := child(t, "spec"); spec != nil {
			defaultPodSpec(spec)
		}
	}
}

// defaultPodSpec is SetDefaults_PodSpec with the defaults of what a pod spec holds: containers,
// their ports, probes and environment, and volumes.
func defaultPodSpec(spec map[string]any) {
	setDefault(spec, "dnsPolicy", "ClusterFirst")
	setDefault(spec, "restartPolicy", "Always")
	setDefault(spec, "terminationGracePeriodSeconds", int64(30))
	setDefault(spec, "schedulerName", "default-scheduler")
	setDefault(spec, "securityContext", map[string]any{})
	for _, key := range []string{"initContainers", "containers", "ephemeralContainers"} {
		maps(spec, key, defaultContainer)
	}
	maps(spec, "volumes", defaultVolume)
}

// defaultContainer is SetDefaults_Container and the defaults of its ports, probes and
// environment.
func defaultContainer(c map[string]any) {
	setDefault(c, "terminationMessagePath", "/dev/termination-log")
	setDefault(c, "terminationMessagePolicy", "File")
	if image, _ := c["image"].(string); image != "" {
		setDefault(c, "imagePullPolicy", pullPolicy(image))
	}
	maps(c, "ports", func(p map[string]any) { setDefault(p, "protocol", "TCP") })
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := child(c, probe); p != nil {
			setDefault(p, "timeoutSeconds", int64(1))
			setDefault(p, "periodSeconds", int64(10))
			setDefault(p, "successThreshold", int64(1))
			setDefault(p, "failureThreshold", int64(3))
			if h := child(p, "httpGet"); h != nil {
				setDefault(h, "path", "/")
				setDefault(h, "scheme", "HTTP")
			}
		}
	}
	maps(c, "env", func(e map[string]any) {
		if vf := child(e, "valueFrom"); vf != nil {
			if fr := child(vf, "fieldRef"); fr != nil {
				setDefault(fr, "apiVersion", "v1")
			}
		}
	})
}

// pullPolicy is SetDefaults_Container's imagePullPolicy for image: Always for the tag latest or
// no tag, IfNotPresent for any other tag or a digest.
func pullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, hasTag := strings.Cut(name, ":")
	if !hasTag || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// defaultVolume is SetDefaults_Volume and the defaults of its sources' modes (0644).
func defaultVolume(v map[string]any) {
	sources := 0
	for k := range v {
		if k != "name" {
			sources++
		}
	}
	if sources == 0 {
		v["emptyDir"] = map[string]any{}
	}
	for _, src := range []string{"secret", "configMap", "downwardAPI", "projected"} {
		if s := child(v, src); s != nil {
			setDefault(s, "defaultMode", int64(0o644))
		}
	}
	if hp := child(v, "hostPath"); hp != nil {
		setDefault(hp, "type", "")
	}
}

// defaultRequestsFromLimits is SetDefaults_Pod's: a container with limits and no request for a
// resource requests its limit.
func defaultRequestsFromLimits(spec map[string]any) {
	for _, key := range []string{"initContainers", "containers"} {
		maps(spec, key, func(c map[string]any) {
			res := child(c, "resources")
			limits := child(res, "limits")
			if len(limits) == 0 {
				return
			}
			req := ensureChild(res, "requests")
			if req == nil {
				return
			}
			for name, q := range limits {
				if _, ok := req[name]; !ok {
					req[name] = q
				}
			}
		})
	}
}

func defaultDeployment(o map[string]any) {
	spec := child(o, "spec")
	if spec == nil {
		return
	}
	setDefault(spec, "replicas", int64(1))
	if st := ensureChild(spec, "strategy"); st != nil {
		setDefault(st, "type", "RollingUpdate")
		if st["type"] == "RollingUpdate" {
			if ru := ensureChild(st, "rollingUpdate"); ru != nil {
				setDefault(ru, "maxUnavailable", "25%")
				setDefault(ru, "maxSurge", "25%")
			}
		}
	}
	setDefault(spec, "revisionHistoryLimit", int64(10))
	setDefault(spec, "progressDeadlineSeconds", int64(600))
	defaultTemplate(spec, "template")
}

func defaultReplicaSet(o map[string]any) {
	if spec := child(o, "spec"); spec != nil {
		setDefault(spec, "replicas", int64(1))
		defaultTemplate(spec, "template")
	}
}

func defaultStatefulSet(o map[string]any) {
	spec := child(o, "spec")
	if spec == nil {
		return
	}
	setDefault(spec, "podManagementPolicy", "OrderedReady")
	if us := ensureChild(spec, "updateStrategy"); us != nil {
		setDefault(us, "type", "RollingUpdate")
		if us["type"] == "RollingUpdate" {
			if ru := ensureChild(us, "rollingUpdate"); ru != nil {
				setDefault(ru, "partition", int64(0))
			}
		}
	}
	if p := ensureChild(spec, "persistentVolumeClaimRetentionPolicy"); p != nil {
		setDefault(p, "whenDeleted", "Retain")
		setDefault(p, "whenScaled", "Retain")
	}
	setDefault(spec, "replicas", int64(1))
	setDefault(spec, "revisionHistoryLimit", int64(10))
	defaultTemplate(spec, "template")
	maps(spec, "volumeClaimTemplates", func(pvc map[string]any) {
		if s := child(pvc, "spec"); s != nil {
			setDefault(s, "volumeMode", "Filesystem")
		}
	})
}

func defaultDaemonSet(o map[string]any) {
	spec := child(o, "spec")
	if spec == nil {
		return
	}
	if us := ensureChild(spec, "updateStrategy"); us != nil {
		setDefault(us, "type", "RollingUpdate")
		if us["type"] == "RollingUpdate" {
			if ru := ensureChild(us, "rollingUpdate"); ru != nil {
				setDefault(ru, "maxUnavailable", int64(1))
				setDefault(ru, "maxSurge", int64(0))
			}
		}
	}
	setDefault(spec, "revisionHistoryLimit", int64(10))
	defaultTemplate(spec, "template")
}

func defaultReplicationController(o map[string]any) {
	spec := child(o, "spec")
	if spec == nil {
		return
	}
	setDefault(spec, "replicas", int64(1))
	if t := child(spec, "template"); t != nil {
		labels := child(child(t, "metadata"), "labels")
		if len(labels) > 0 {
			if _, ok := spec["selector"]; !ok {
				spec["selector"] = copyStrings(labels)
			}
			if md := ensureChild(o, "metadata"); md != nil {
				if _, ok := md["labels"]; !ok {
					md["labels"] = copyStrings(labels)
				}
			}
		}
	}
	defaultTemplate(spec, "template")
}

func copyStrings(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// defaultJobSpec is SetDefaults_Job on a Job's spec.
func defaultJobSpec(spec map[string]any) {
	_, hasCompletions := spec["completions"]
	_, hasParallelism := spec["parallelism"]
	if (!hasCompletions || spec["completions"] == nil) && (!hasParallelism || spec["parallelism"] == nil) {
		spec["completions"] = int64(1)
		spec["parallelism"] = int64(1)
	}
	setDefault(spec, "parallelism", int64(1))
	if _, perIndex := spec["backoffLimitPerIndex"]; perIndex && spec["backoffLimitPerIndex"] != nil {
		setDefault(spec, "backoffLimit", int64(1<<31-1))
	} else {
		setDefault(spec, "backoffLimit", int64(6))
	}
	setDefault(spec, "completionMode", "NonIndexed")
	setDefault(spec, "suspend", false)
	if pfp, ok := spec["podFailurePolicy"]; ok && pfp != nil {
		setDefault(spec, "podReplacementPolicy", "Failed")
	} else {
		setDefault(spec, "podReplacementPolicy", "TerminatingOrFailed")
	}
}

func defaultCronJob(o map[string]any) {
	spec := child(o, "spec")
	if spec == nil {
		return
	}
	setDefault(spec, "concurrencyPolicy", "Allow")
	setDefault(spec, "suspend", false)
	setDefault(spec, "successfulJobsHistoryLimit", int64(3))
	setDefault(spec, "failedJobsHistoryLimit", int64(1))
	if jt := child(spec, "jobTemplate"); jt != nil {
		if js := child(jt, "spec"); js != nil {
			defaultTemplate(js, "template")
		}
	}
}

func defaultService(o map[string]any) {
	spec := child(o, "spec")
	if spec == nil {
		return
	}
	setDefault(spec, "sessionAffinity", "None")
	if spec["sessionAffinity"] == "ClientIP" {
		if c := ensureChild(spec, "sessionAffinityConfig"); c != nil {
			if ip := ensureChild(c, "clientIP"); ip != nil {
				setDefault(ip, "timeoutSeconds", int64(10800))
			}
		}
	}
	setDefault(spec, "type", "ClusterIP")
	maps(spec, "ports", func(p map[string]any) {
		setDefault(p, "protocol", "TCP")
		if tp, ok := p["targetPort"]; !ok || tp == nil || tp == int64(0) || tp == "" {
			if port, ok := p["port"]; ok {
				p["targetPort"] = port
			}
		}
	})
	typ, _ := spec["type"].(string)
	if typ == "NodePort" || typ == "LoadBalancer" {
		setDefault(spec, "externalTrafficPolicy", "Cluster")
	}
	if typ != "ExternalName" {
		setDefault(spec, "internalTrafficPolicy", "Cluster")
	}
	if typ == "LoadBalancer" {
		setDefault(spec, "allocateLoadBalancerNodePorts", true)
	}
}

// defaultBinding is SetDefaults_RoleBinding and SetDefaults_ClusterRoleBinding with
// SetDefaults_Subject.
func defaultBinding(o map[string]any) {
	if ref := child(o, "roleRef"); ref != nil {
		setDefault(ref, "apiGroup", "rbac.authorization.k8s.io")
	}
	maps(o, "subjects", func(s map[string]any) {
		if _, ok := s["apiGroup"]; ok && s["apiGroup"] != "" {
			return
		}
		if k := s["kind"]; k == "User" || k == "Group" {
			s["apiGroup"] = "rbac.authorization.k8s.io"
		}
	})
}
