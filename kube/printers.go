package kube

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// kube-apiserver answers `kubectl get` of a built-in kind with a server-side table whose columns
// are that kind's printer's (its printers package, in k8s.io/kubernetes, which this module does
// not import): the printers below are written after them, one row per kind, for the kinds users
// list most. The server always prints wide (the priority-1 columns are in every table; kubectl
// shows them with -o wide), and ages are strings counted from now ("5m", "<unknown>" when
// unset). Kinds without a printer here get the front's default table (Name and Age).

// printer is one built-in kind's table: its columns and the cells of one object.
type printer struct {
	columns []metav1.TableColumnDefinition
	// cells returns obj's cells, one per column; now is the fake apiserver's clock.
	cells func(obj *unstructured.Unstructured, now time.Time) ([]any, error)
}

var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)

func column(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

func wideColumn(name, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Priority: 1, Description: description}
}

var (
	containersColumn = wideColumn("Containers", "Names of each container in the template.")
	imagesColumn     = wideColumn("Images", "Images referenced by each container in the template.")
)

// typed decodes obj into the Go type T (through its JSON form when the converter refuses it).
func typed[T any](obj *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := FromUnstructured(obj.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}

// printerOf builds a printer from a cell function of the kind's Go type.
func printerOf[T any](columns []metav1.TableColumnDefinition, cells func(o *T, now time.Time) []any) printer {
	return printer{columns: columns, cells: func(obj *unstructured.Unstructured, now time.Time) ([]any, error) {
		o, err := typed[T](obj)
		if err != nil {
			return nil, err
		}
		return cells(o, now), nil
	}}
}

// since is a timestamp's age as kube-apiserver's printers write it.
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func sinceMicro(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// containerCells are a template's container names and images, comma-separated.
func containerCells(cs []corev1.Container) (string, string) {
	names := make([]string, len(cs))
	images := make([]string, len(cs))
	for i, c := range cs {
		names[i], images[i] = c.Name, c.Image
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func replicas(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func selectorCell(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

// printers are the built-in kinds' tables by kind.
var printers = map[schema.GroupVersionKind]printer{
	{Version: "v1", Kind: "Namespace"}: printerOf([]metav1.TableColumnDefinition{nameColumn, column("Status", "string", "The status of the namespace"), ageColumn},
		func(o *corev1.Namespace, now time.Time) []any {
			return []any{o.Name, string(o.Status.Phase), since(o.CreationTimestamp, now)}
		}),
	{Version: "v1", Kind: "ConfigMap"}: printerOf([]metav1.TableColumnDefinition{nameColumn, column("Data", "string", corev1.ConfigMap{}.SwaggerDoc()["data"]), ageColumn},
		func(o *corev1.ConfigMap, now time.Time) []any {
			return []any{o.Name, int64(len(o.Data) + len(o.BinaryData)), since(o.CreationTimestamp, now)}
		}),
	{Version: "v1", Kind: "Secret"}: printerOf([]metav1.TableColumnDefinition{nameColumn, column("Type", "string", corev1.Secret{}.SwaggerDoc()["type"]), column("Data", "string", corev1.Secret{}.SwaggerDoc()["data"]), ageColumn},
		func(o *corev1.Secret, now time.Time) []any {
			return []any{o.Name, string(o.Type), int64(len(o.Data)), since(o.CreationTimestamp, now)}
		}),
	{Version: "v1", Kind: "ServiceAccount"}: printerOf([]metav1.TableColumnDefinition{nameColumn, ageColumn},
		func(o *corev1.ServiceAccount, now time.Time) []any {
			return []any{o.Name, since(o.CreationTimestamp, now)}
		}),
	{Version: "v1", Kind: "Event"}:                         printerOf(eventColumns, eventCells),
	{Group: "events.k8s.io", Version: "v1", Kind: "Event"}: printerOf(eventColumns, func(o *eventsv1.Event, now time.Time) []any { return eventCells(coreEvent(o), now) }),
	{Version: "v1", Kind: "Pod"}:                           printerOf(podColumns, podCells),
	{Version: "v1", Kind: "Service"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"]), column("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]),
		column("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]), column("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"]),
		ageColumn, wideColumn("Selector", corev1.ServiceSpec{}.SwaggerDoc()["selector"])}, serviceCells),
	{Group: "apps", Version: "v1", Kind: "Deployment"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Ready", "string", "Number of the pod with ready state"), column("Up-to-date", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]),
		column("Available", "string", appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]), ageColumn, containersColumn, imagesColumn,
		wideColumn("Selector", appsv1.DeploymentSpec{}.SwaggerDoc()["selector"])},
		func(o *appsv1.Deployment, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			return []any{o.Name, fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicas(o.Spec.Replicas)), int64(o.Status.UpdatedReplicas), int64(o.Status.AvailableReplicas),
				since(o.CreationTimestamp, now), names, images, selectorCell(o.Spec.Selector)}
		}),
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Desired", "integer", appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]), column("Current", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]),
		column("Ready", "integer", appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]), ageColumn, containersColumn, imagesColumn,
		wideColumn("Selector", appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"])},
		func(o *appsv1.ReplicaSet, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			return []any{o.Name, int64(replicas(o.Spec.Replicas)), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas), since(o.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		}),
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Ready", "string", "Number of the pod with ready state"), ageColumn, containersColumn, imagesColumn},
		func(o *appsv1.StatefulSet, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			return []any{o.Name, fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicas(o.Spec.Replicas)), since(o.CreationTimestamp, now), names, images}
		}),
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Desired", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]),
		column("Current", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]),
		column("Ready", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]),
		column("Up-to-date", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]),
		column("Available", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]),
		column("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]), ageColumn, containersColumn, imagesColumn,
		wideColumn("Selector", appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"])},
		func(o *appsv1.DaemonSet, now time.Time) []any {
			names, images := containerCells(o.Spec.Template.Spec.Containers)
			s := o.Status
			return []any{o.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady), int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable),
				labels.FormatLabels(o.Spec.Template.Spec.NodeSelector), since(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
		}),
	{Group: "batch", Version: "v1", Kind: "Job"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Status", "string", "Status of the job."), column("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
		column("Duration", "string", "Time required to complete the job."), ageColumn, containersColumn, imagesColumn,
		wideColumn("Selector", batchv1.JobSpec{}.SwaggerDoc()["selector"])}, jobCells),
	{Group: "batch", Version: "v1", Kind: "CronJob"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Schedule", "string", batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]), column("Timezone", "string", batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]),
		column("Suspend", "boolean", batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]), column("Active", "integer", batchv1.CronJobStatus{}.SwaggerDoc()["active"]),
		column("Last Schedule", "string", batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]), ageColumn, containersColumn, imagesColumn,
		wideColumn("Selector", batchv1.JobSpec{}.SwaggerDoc()["selector"])},
		func(o *batchv1.CronJob, now time.Time) []any {
			last := "<none>"
			if o.Status.LastScheduleTime != nil {
				last = since(*o.Status.LastScheduleTime, now)
			}
			tz := "<none>"
			if o.Spec.TimeZone != nil {
				tz = *o.Spec.TimeZone
			}
			suspend := "<unset>"
			switch {
			case o.Spec.Suspend == nil:
			case *o.Spec.Suspend:
				suspend = "True"
			default:
				suspend = "False"
			}
			names, images := containerCells(o.Spec.JobTemplate.Spec.Template.Spec.Containers)
			return []any{o.Name, o.Spec.Schedule, tz, suspend, int64(len(o.Status.Active)), last, since(o.CreationTimestamp, now), names, images,
				metav1.FormatLabelSelector(o.Spec.JobTemplate.Spec.Selector)}
		}),
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}: printerOf([]metav1.TableColumnDefinition{nameColumn,
		column("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]), ageColumn},
		func(o *coordinationv1.Lease, now time.Time) []any {
			holder := ""
			if o.Spec.HolderIdentity != nil {
				holder = *o.Spec.HolderIdentity
			}
			return []any{o.Name, holder, since(o.CreationTimestamp, now)}
		}),
}

var eventColumns = []metav1.TableColumnDefinition{
	column("Last Seen", "string", corev1.Event{}.SwaggerDoc()["lastTimestamp"]),
	column("Type", "string", corev1.Event{}.SwaggerDoc()["type"]),
	column("Reason", "string", corev1.Event{}.SwaggerDoc()["reason"]),
	column("Object", "string", corev1.Event{}.SwaggerDoc()["involvedObject"]),
	wideColumn("Subobject", corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]),
	wideColumn("Source", corev1.Event{}.SwaggerDoc()["source"]),
	column("Message", "string", corev1.Event{}.SwaggerDoc()["message"]),
	wideColumn("First Seen", corev1.Event{}.SwaggerDoc()["firstTimestamp"]),
	wideColumn("Count", corev1.Event{}.SwaggerDoc()["count"]),
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
}

// coreEvent is an events.k8s.io/v1 Event as the core/v1 Event it is stored as (kube-apiserver
// prints both versions from one internal type).
func coreEvent(o *eventsv1.Event) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: o.ObjectMeta, InvolvedObject: o.Regarding, Reason: o.Reason, Message: o.Note,
		Source: o.DeprecatedSource, FirstTimestamp: o.DeprecatedFirstTimestamp, LastTimestamp: o.DeprecatedLastTimestamp,
		Count: o.DeprecatedCount, Type: o.Type, EventTime: o.EventTime, Series: coreSeries(o.Series), Action: o.Action,
		Related: o.Related, ReportingController: o.ReportingController, ReportingInstance: o.ReportingInstance,
	}
}

func coreSeries(s *eventsv1.EventSeries) *corev1.EventSeries {
	if s == nil {
		return nil
	}
	return &corev1.EventSeries{Count: s.Count, LastObservedTime: s.LastObservedTime}
}

func eventCells(o *corev1.Event, now time.Time) []any {
	first := since(o.FirstTimestamp, now)
	if o.FirstTimestamp.IsZero() {
		first = sinceMicro(o.EventTime, now)
	}
	last := since(o.LastTimestamp, now)
	if o.LastTimestamp.IsZero() {
		last = first
	}
	count := o.Count
	if o.Series != nil {
		last, count = sinceMicro(o.Series.LastObservedTime, now), o.Series.Count
	} else if count == 0 {
		count = 1 // a singleton event of the new API has no count
	}
	target := strings.ToLower(o.InvolvedObject.Kind)
	if o.InvolvedObject.Name != "" {
		target += "/" + o.InvolvedObject.Name
	}
	source := firstNonEmpty(o.Source.Component, o.ReportingController)
	if instance := firstNonEmpty(o.Source.Host, o.ReportingInstance); instance != "" {
		source += ", " + instance
	}
	return []any{last, o.Type, o.Reason, target, o.InvolvedObject.FieldPath, source, strings.TrimSpace(o.Message), first, int64(count), o.Name}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

var podColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
	column("Status", "string", "The aggregate status of the containers in this pod."),
	column("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
	ageColumn,
	wideColumn("IP", corev1.PodStatus{}.SwaggerDoc()["podIP"]),
	wideColumn("Node", corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
	wideColumn("Nominated Node", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
	wideColumn("Readiness Gates", corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
}

// podCells follows the pod printer for pods without init containers in progress: the reason is
// the phase (or the status's reason), then the last waiting or terminated container's reason;
// a pod being deleted that has not finished is Terminating.
func podCells(o *corev1.Pod, now time.Time) []any {
	reason := string(o.Status.Phase)
	if o.Status.Reason != "" {
		reason = o.Status.Reason
	}
	for _, c := range o.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}
	total, ready, restarts := len(o.Spec.Containers), 0, 0
	var lastRestart metav1.Time
	hasRunning := false
	for i := len(o.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := o.Status.ContainerStatuses[i]
		restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			}
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			ready++
		}
	}
	if reason == "Completed" && hasRunning {
		reason = "NotReady"
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				reason = "Running"
			}
		}
	}
	if o.DeletionTimestamp != nil && o.Status.Phase != corev1.PodSucceeded && o.Status.Phase != corev1.PodFailed {
		reason = "Terminating"
	}
	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, since(lastRestart, now))
	}
	ip := "<none>"
	if len(o.Status.PodIPs) > 0 && o.Status.PodIPs[0].IP != "" {
		ip = o.Status.PodIPs[0].IP
	}
	node, nominated := o.Spec.NodeName, o.Status.NominatedNodeName
	if node == "" {
		node = "<none>"
	}
	if nominated == "" {
		nominated = "<none>"
	}
	gates := "<none>"
	if len(o.Spec.ReadinessGates) > 0 {
		met := 0
		for _, g := range o.Spec.ReadinessGates {
			for _, c := range o.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == corev1.ConditionTrue {
						met++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", met, len(o.Spec.ReadinessGates))
	}
	return []any{o.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsCell, since(o.CreationTimestamp, now), ip, node, nominated, gates}
}

func serviceCells(o *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	if len(o.Spec.ClusterIPs) > 0 {
		clusterIP = o.Spec.ClusterIPs[0]
	}
	external := "<unknown>"
	switch o.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		external = "<none>"
		if len(o.Spec.ExternalIPs) > 0 {
			external = strings.Join(o.Spec.ExternalIPs, ",")
		}
	case corev1.ServiceTypeExternalName:
		external = o.Spec.ExternalName
	case corev1.ServiceTypeLoadBalancer:
		seen := map[string]bool{}
		var ips []string
		for _, in := range o.Status.LoadBalancer.Ingress {
			if a := firstNonEmpty(in.IP, in.Hostname); a != "" && !seen[a] {
				seen[a] = true
				ips = append(ips, a)
			}
		}
		sort.Strings(ips)
		ips = append(ips, o.Spec.ExternalIPs...)
		external = "<pending>"
		if len(ips) > 0 {
			external = strings.Join(ips, ",")
		}
	}
	var ports []string
	for _, p := range o.Spec.Ports {
		s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			s = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
		ports = append(ports, s)
	}
	portCell := strings.Join(ports, ",")
	if portCell == "" {
		portCell = "<none>"
	}
	return []any{o.Name, string(o.Spec.Type), clusterIP, external, portCell, since(o.CreationTimestamp, now), labels.FormatLabels(o.Spec.Selector)}
}

func jobCells(o *batchv1.Job, now time.Time) []any {
	var completions string
	switch {
	case o.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", o.Status.Succeeded, *o.Spec.Completions)
	case o.Spec.Parallelism != nil && *o.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", o.Status.Succeeded, *o.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", o.Status.Succeeded)
	}
	var took string
	switch {
	case o.Status.StartTime == nil:
	case o.Status.CompletionTime == nil:
		took = duration.HumanDuration(now.Sub(o.Status.StartTime.Time))
	default:
		took = duration.HumanDuration(o.Status.CompletionTime.Sub(o.Status.StartTime.Time))
	}
	has := func(t batchv1.JobConditionType) bool {
		for _, c := range o.Status.Conditions {
			if c.Type == t {
				return true
			}
		}
		return false
	}
	status := "Running"
	switch {
	case has(batchv1.JobComplete):
		status = "Complete"
	case has(batchv1.JobFailed):
		status = "Failed"
	case o.DeletionTimestamp != nil:
		status = "Terminating"
	case has(batchv1.JobSuspended):
		status = "Suspended"
	case has(batchv1.JobFailureTarget):
		status = "FailureTarget"
	case has(batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	}
	names, images := containerCells(o.Spec.Template.Spec.Containers)
	return []any{o.Name, status, completions, took, since(o.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(o.Spec.Selector)}
}
