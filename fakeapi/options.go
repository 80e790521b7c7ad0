package fakeapi

import (
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// rvKind classifies a request's resourceVersion (fakeapi.md §3.1, §4.1).
type rvKind int

const (
	rvUnset rvKind = iota + 1 // ""
	rvAny                     // "0"
	rvExact                   // N
)

// request is a parsed, validated list or watch request.
type request struct {
	label       labels.Selector
	field       fields.Selector
	rvKind      rvKind
	rv          uint64
	rvm         metav1.ResourceVersionMatch
	sendInitial bool
	limit       int64
	cont        string
	bookmarks   bool
	timeout     *int64
	noSelector  bool
	// lendTo, when set, names the consumer a LIST lends its items to instead of handing out
	// copies (ListLent, lend.go).
	lendTo string
	// observer marks lendTo as an observer that only reads (Lending.Snapshot): it is not one of
	// the holders a mutation report names.
	observer bool
}

// everyLabel and everyField are the selectors of a request that selects nothing, made once:
// each call of labels.Everything and fields.Everything allocates the interface's value, and
// selectors are never changed once made.
var (
	everyLabel = labels.Everything()
	everyField = fields.Everything()
)

// parseRequest checks options the way kube-apiserver does, in its order: selectors must parse
// (400), the defaults of metainternalversion.SetListOptionsDefaults apply to watches, the option
// combinations must validate (422, using apimachinery's own ValidateListOptions), field
// selectors must name supported fields (400), and the resourceVersion must parse (400).
//
// It returns the request by value: a LIST, most of a run's requests, keeps it on its stack.
func parseRequest(res *resourceStore, opts metav1.ListOptions, isWatch bool) (request, error) {
	if !isWatch && opts == (metav1.ListOptions{}) {
		// A LIST of everything, the current state: what the steps below make of it, without
		// the defaults and the validation that cannot change it (a control plane's scan makes
		// one such request per served resource; TestParseRequestOfNothing compares).
		return listAllRequest, nil
	}
	return parseOptions(res, opts, isWatch)
}

// listAllRequest is what parseOptions makes of a LIST without options.
var listAllRequest = request{label: everyLabel, field: everyField, rvKind: rvUnset, noSelector: true}

// parseOptions is parseRequest without its shortcut.
func parseOptions(res *resourceStore, opts metav1.ListOptions, isWatch bool) (request, error) {
	// Most requests select nothing: labels.Everything is what labels.Parse("") gives (an empty
	// selector), without its three allocations.
	ls, err := everyLabel, error(nil)
	if opts.LabelSelector != "" {
		ls, err = labels.Parse(opts.LabelSelector)
	}
	if err != nil {
		return request{}, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	// Likewise fields.Everything for an empty field selector, what fields.ParseSelector("")
	// gives.
	fs := everyField
	if opts.FieldSelector != "" {
		fs, err = fields.ParseSelector(opts.FieldSelector)
	}
	if err != nil {
		return request{}, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	in := internalversion.ListOptions{
		LabelSelector:        ls,
		FieldSelector:        fs,
		Watch:                isWatch,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		TimeoutSeconds:       opts.TimeoutSeconds,
		Limit:                opts.Limit,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	// The WatchList server feature is on by default since 1.34 (fakeapi.md §4.1).
	internalversion.SetListOptionsDefaults(&in, true)
	if errs := validation.ValidateListOptions(&in, true); len(errs) > 0 {
		return request{}, errInvalidOptions(errs)
	}
	for _, r := range fs.Requirements() {
		if !fieldSupported(res, r.Field) {
			return request{}, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
		}
	}
	req := request{
		label:      ls,
		field:      fs,
		rvm:        in.ResourceVersionMatch,
		limit:      max(in.Limit, 0),
		cont:       in.Continue,
		bookmarks:  in.AllowWatchBookmarks,
		timeout:    in.TimeoutSeconds,
		noSelector: ls.Empty() && fs.Empty(),
	}
	if in.SendInitialEvents != nil {
		req.sendInitial = *in.SendInitialEvents
	}
	switch in.ResourceVersion {
	case "":
		req.rvKind = rvUnset
	case "0":
		req.rvKind = rvAny
	default:
		n, err := strconv.ParseUint(in.ResourceVersion, 10, 64)
		if err != nil {
			return request{}, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
		}
		if n == 0 {
			req.rvKind = rvAny
		} else {
			req.rvKind, req.rv = rvExact, n
		}
	}
	return req, nil
}

func fieldSupported(res *resourceStore, f string) bool {
	if f == "metadata.name" || (f == "metadata.namespace" && res.info.Namespaced) {
		return true
	}
	for _, l := range res.info.FieldLabels {
		if l == f {
			return true
		}
	}
	return false
}

// fieldSet is the set of selectable fields of obj (fakeapi.md §4.4).
func fieldSet(res *resourceStore, obj *unstructured.Unstructured) fields.Set {
	set := fields.Set{"metadata.name": obj.GetName()}
	if res.info.Namespaced {
		set["metadata.namespace"] = obj.GetNamespace()
	}
	for _, l := range res.info.FieldLabels {
		v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(l, ".")...)
		if !found || v == nil {
			set[l] = ""
			continue
		}
		set[l] = fmt.Sprint(v)
	}
	return set
}

// matches reports whether obj is in the scope of a request: namespace, labels, fields.
func (r *request) matches(res *resourceStore, ns string, obj *unstructured.Unstructured) bool {
	if obj == nil || (ns != "" && obj.GetNamespace() != ns) {
		return false
	}
	if r.noSelector {
		return true
	}
	return r.label.Matches(labels.Set(obj.GetLabels())) && r.field.Matches(fieldSet(res, obj))
}
