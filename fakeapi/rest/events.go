package rest

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kube-apiserver keeps events in one store and serves each of them in both versions: an event
// written through core/v1 (client-go's old recorder, kubectl describe's reads) is read through
// events.k8s.io/v1 (the new recorder's) and the other way round, one object with one uid and
// one resourceVersion. The front does the same: events.k8s.io/v1 events are a view of core/v1's
// store, each field renamed both ways as kube-apiserver converts them (its events/v1 conversion:
// regarding is involvedObject, note is message, reportingController is reportingComponent, and
// the deprecated* fields are the core fields without the prefix); everything else (reason,
// action, type, series, related, eventTime, reportingInstance, metadata) is the same in both.
// fakeapi's own events.k8s.io collection is then not served (in process, without the front,
// the two stay apart).

var (
	coreEventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	newEventsGVR  = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
)

// viewConversion converts a view's objects (resource.store) when the view's fields differ from
// the store's, not only its apiVersion.
type viewConversion struct {
	// toStore and fromStore return the object in the other form: a new top level (the nested
	// values are shared, so the input must not be changed afterwards by the caller).
	toStore, fromStore func(obj map[string]any) map[string]any
	// fieldLabel maps a field selector's label of the view to the store's; false when the view
	// does not support it.
	fieldLabel func(label string) (string, bool)
}

// eventFieldRenames are the top-level fields of an events.k8s.io/v1 Event and the core/v1 Event
// fields they are.
var eventFieldRenames = [][2]string{
	{"regarding", "involvedObject"},
	{"note", "message"},
	{"reportingController", "reportingComponent"},
	{"deprecatedSource", "source"},
	{"deprecatedFirstTimestamp", "firstTimestamp"},
	{"deprecatedLastTimestamp", "lastTimestamp"},
	{"deprecatedCount", "count"},
}

// eventFieldLabels are the field selector labels kube-apiserver accepts for events.k8s.io/v1
// Events, with the core/v1 label each is.
var eventFieldLabels = map[string]string{
	"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace",
	"reason": "reason", "type": "type", "reportingController": "reportingComponent",
	"regarding.kind": "involvedObject.kind", "regarding.namespace": "involvedObject.namespace",
	"regarding.name": "involvedObject.name", "regarding.uid": "involvedObject.uid",
	"regarding.apiVersion": "involvedObject.apiVersion", "regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath": "involvedObject.fieldPath",
}

var eventConversion = &viewConversion{
	toStore: func(obj map[string]any) map[string]any {
		return rendered(renameFields(obj, "v1", 0, 1), coreEventAlways, coreEventOmitEmpty)
	},
	fromStore: func(obj map[string]any) map[string]any {
		return rendered(renameFields(obj, "events.k8s.io/v1", 1, 0), newEventAlways, newEventOmitEmpty)
	},
	fieldLabel: func(label string) (string, bool) {
		l, ok := eventFieldLabels[label]
		return l, ok
	},
}

// Each version's Go type always writes some fields, empty or null when unset, and leaves out
// others when empty: kube-apiserver writes an event as the type of the version asked for, so a
// field converted from the other version is written or left out as that type does.
var (
	coreEventAlways = map[string]any{"eventTime": nil, "firstTimestamp": nil, "lastTimestamp": nil,
		"reportingComponent": "", "reportingInstance": "", "source": map[string]any{}, "involvedObject": map[string]any{}}
	coreEventOmitEmpty = []string{"message", "reason", "type", "action", "count"}
	newEventAlways     = map[string]any{"eventTime": nil, "regarding": map[string]any{}, "deprecatedSource": map[string]any{},
		"deprecatedFirstTimestamp": nil, "deprecatedLastTimestamp": nil}
	newEventOmitEmpty = []string{"note", "reason", "type", "action", "reportingController", "reportingInstance", "deprecatedCount"}
)

// rendered is obj (changed in place: a new top level already) with the fields always written
// present and the empty ones of omitEmpty left out.
func rendered(obj map[string]any, always map[string]any, omitEmpty []string) map[string]any {
	for k, v := range always {
		if _, ok := obj[k]; !ok {
			if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
				v = map[string]any{} // each object its own map
			}
			obj[k] = v
		}
	}
	for _, k := range omitEmpty {
		switch v := obj[k].(type) {
		case string:
			if v == "" {
				delete(obj, k)
			}
		case float64:
			if v == 0 {
				delete(obj, k)
			}
		case int64:
			if v == 0 {
				delete(obj, k)
			}
		}
	}
	return obj
}

// renameFields returns obj with a new top level: the apiVersion given (when obj has one) and
// each field eventFieldRenames[i][from] renamed to eventFieldRenames[i][to].
func renameFields(obj map[string]any, apiVersion string, from, to int) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, r := range eventFieldRenames {
		v, ok := obj[r[from]]
		delete(out, r[from])
		if ok {
			out[r[to]] = v
		}
	}
	if _, ok := obj["apiVersion"]; ok {
		out["apiVersion"] = apiVersion
	}
	return out
}

// storeListOptions rewrites opts's field selector, written for the view t serves, into the
// store's labels. A label the view does not support is a 400, as kube-apiserver answers it.
func (t target) storeListOptions(opts *metav1.ListOptions) error {
	conv := t.res.conv
	if conv == nil || opts.FieldSelector == "" {
		return nil
	}
	sel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	var bad error
	out, err := sel.Transform(func(label, value string) (string, string, error) {
		l, ok := conv.fieldLabel(label)
		if !ok {
			bad = fmt.Errorf("field label not supported: %s", label)
			return "", "", bad
		}
		return l, value, nil
	})
	if err != nil {
		if bad != nil {
			return apierrors.NewBadRequest(bad.Error())
		}
		return apierrors.NewBadRequest(err.Error())
	}
	opts.FieldSelector = strings.TrimSpace(out.String())
	return nil
}
