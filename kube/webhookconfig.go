package kube

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/util/webhook"
)

// This file validates MutatingWebhookConfigurations and ValidatingWebhookConfigurations as
// kube-apiserver's registry does (k8s.io/kubernetes/pkg/apis/admissionregistration/validation,
// which cannot be imported outside k8s.io/kubernetes; written here from its rules, over the v1
// types, with apimachinery's and apiserver's own helpers where it uses them): each webhook's name
// fully qualified and unique in its configuration; rules with operations (CREATE, UPDATE,
// DELETE, CONNECT or "*" alone), apiGroups and apiVersions ("*" alone), resources (subresources
// with "x/*" and "*/x" exclusive of what they cover, "*/*" and "*" alone), scope Cluster,
// Namespaced or "*"; failurePolicy Fail or Ignore; matchPolicy Exact or Equivalent; sideEffects
// required, None or NoneOnDryRun; timeoutSeconds 1 to 30; selectors valid label selectors;
// exactly one of clientConfig.url (https, no user, fragment or query) and clientConfig.service;
// admissionReviewVersions given, DNS labels, without duplicates, one of v1 and v1beta1 among
// them; matchConditions (at most 64) named as qualified names, without duplicates, and
// compiling as CEL; a mutating webhook's reinvocationPolicy Never or IfNeeded. An update holds
// the new object to the rules the old one met: a rule the old configuration already broke
// (side effects, unrecognised review versions, duplicate names, invalid selector values,
// unchanged match conditions) is not enforced on it, as kube-apiserver ratchets them.

// webhookValidationOptions are the rules enforced on one write (all of them on a create).
type webhookValidationOptions struct {
	ignoreMatchConditions     bool
	requireNoSideEffects      bool
	requireRecognizedVersions bool
	requireUniqueNames        bool
	allowInvalidLabelValue    bool
	storedExpressions         map[string]bool // match conditions the old object had
}

// webhookValidator is one webhook of either kind, as validation reads it.
type webhookValidator struct {
	name                    string
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	clientConfig            admissionregistrationv1.WebhookClientConfig
	admissionReviewVersions []string
	matchConditions         []admissionregistrationv1.MatchCondition
	reinvocationPolicy      *admissionregistrationv1.ReinvocationPolicyType // mutating only
}

var (
	mutatingConfigGVK   = admissionregistrationv1.SchemeGroupVersion.WithKind("MutatingWebhookConfiguration")
	validatingConfigGVK = admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration")
)

// validateWebhookConfiguration validates obj, a webhook configuration of kind gvk, written over
// old (nil for a create); ok is false for any other kind.
func validateWebhookConfiguration(gvk schema.GroupVersionKind, obj, old *unstructured.Unstructured) (errs field.ErrorList, ok bool, err error) {
	if gvk != mutatingConfigGVK && gvk != validatingConfigGVK {
		return nil, false, nil
	}
	hooks, err := webhooksOf(gvk, obj)
	if err != nil {
		return nil, true, err
	}
	opts := webhookValidationOptions{requireNoSideEffects: true, requireRecognizedVersions: true, requireUniqueNames: true}
	if old != nil {
		before, err := webhooksOf(gvk, old)
		if err != nil {
			return nil, true, err
		}
		opts = ratchetedOptions(hooks, before)
	}
	names := map[string]bool{}
	for i := range hooks {
		path := field.NewPath("webhooks").Index(i)
		errs = append(errs, hooks[i].validate(opts, path)...)
		errs = append(errs, validateReviewVersions(hooks[i].admissionReviewVersions, opts.requireRecognizedVersions, path.Child("admissionReviewVersions"))...)
		if n := hooks[i].name; opts.requireUniqueNames && n != "" {
			if names[n] {
				errs = append(errs, field.Duplicate(path.Child("name"), n))
			}
			names[n] = true
		}
	}
	return errs, true, nil
}

// webhooksOf reads the webhooks of a configuration.
func webhooksOf(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) ([]webhookValidator, error) {
	var out []webhookValidator
	if gvk == mutatingConfigGVK {
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &c); err != nil {
			return nil, err
		}
		for _, h := range c.Webhooks {
			out = append(out, webhookValidator{h.Name, h.Rules, h.FailurePolicy, h.MatchPolicy, h.SideEffects, h.TimeoutSeconds,
				h.NamespaceSelector, h.ObjectSelector, h.ClientConfig, h.AdmissionReviewVersions, h.MatchConditions, h.ReinvocationPolicy})
		}
		return out, nil
	}
	var c admissionregistrationv1.ValidatingWebhookConfiguration
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &c); err != nil {
		return nil, err
	}
	for _, h := range c.Webhooks {
		out = append(out, webhookValidator{h.Name, h.Rules, h.FailurePolicy, h.MatchPolicy, h.SideEffects, h.TimeoutSeconds,
			h.NamespaceSelector, h.ObjectSelector, h.ClientConfig, h.AdmissionReviewVersions, h.MatchConditions, nil})
	}
	return out, nil
}

// ratchetedOptions are the rules an update must meet: those the old webhooks met.
func ratchetedOptions(hooks, old []webhookValidator) webhookValidationOptions {
	opts := webhookValidationOptions{requireNoSideEffects: true, requireRecognizedVersions: true, requireUniqueNames: true,
		ignoreMatchConditions: len(hooks) == len(old), storedExpressions: map[string]bool{}}
	names := map[string]bool{}
	for i, h := range old {
		if h.sideEffects == nil || !slices.Contains(noSideEffectClasses, string(*h.sideEffects)) {
			opts.requireNoSideEffects = false
		}
		if len(h.admissionReviewVersions) > 0 && !slices.ContainsFunc(h.admissionReviewVersions, acceptedReviewVersion) {
			opts.requireRecognizedVersions = false
		}
		if names[h.name] {
			opts.requireUniqueNames = false
		}
		names[h.name] = true
		for _, sel := range []*metav1.LabelSelector{h.namespaceSelector, h.objectSelector} {
			if sel != nil && len(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				opts.allowInvalidLabelValue = true
			}
		}
		if i < len(hooks) && !reflect.DeepEqual(hooks[i].matchConditions, h.matchConditions) {
			opts.ignoreMatchConditions = false
		}
		for _, mc := range h.matchConditions {
			opts.storedExpressions[mc.Expression] = true
		}
	}
	return opts
}

var (
	failurePolicies      = []string{"Fail", "Ignore"}
	matchPolicies        = []string{"Equivalent", "Exact"}
	sideEffectClasses    = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectClasses  = []string{"None", "NoneOnDryRun"}
	reinvocationPolicies = []string{"IfNeeded", "Never"}
	ruleOperations       = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	ruleScopes           = []string{"*", "Cluster", "Namespaced"}
	reviewVersions       = []string{"v1", "v1beta1"}
)

func acceptedReviewVersion(v string) bool { return slices.Contains(reviewVersions, v) }

func (h *webhookValidator) validate(opts webhookValidationOptions, path *field.Path) field.ErrorList {
	errs := utilvalidation.IsFullyQualifiedName(path.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], path.Child("rules").Index(i))...)
	}
	if p := h.failurePolicy; p != nil && !slices.Contains(failurePolicies, string(*p)) {
		errs = append(errs, field.NotSupported(path.Child("failurePolicy"), *p, failurePolicies))
	}
	if p := h.matchPolicy; p != nil && !slices.Contains(matchPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(path.Child("matchPolicy"), *p, matchPolicies))
	}
	allowed := sideEffectClasses
	if opts.requireNoSideEffects {
		allowed = noSideEffectClasses
	}
	switch {
	case h.sideEffects == nil:
		errs = append(errs, field.Required(path.Child("sideEffects"), "must specify one of "+strings.Join(allowed, ", ")))
	case !slices.Contains(allowed, string(*h.sideEffects)):
		errs = append(errs, field.NotSupported(path.Child("sideEffects"), *h.sideEffects, allowed))
	}
	if t := h.timeoutSeconds; t != nil && (*t < 1 || *t > 30) {
		errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	selOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	if h.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.namespaceSelector, selOpts, path.Child("namespaceSelector"))...)
	}
	if h.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.objectSelector, selOpts, path.Child("objectSelector"))...)
	}
	if p := h.reinvocationPolicy; p != nil && !slices.Contains(reinvocationPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(path.Child("reinvocationPolicy"), *p, reinvocationPolicies))
	}
	cc, ccPath := h.clientConfig, path.Child("clientConfig")
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(ccPath, "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhook.ValidateWebhookURL(ccPath.Child("url"), *cc.URL, true)...)
	default:
		// kube-apiserver hands the service's name where the helper takes its namespace and the
		// reverse; kept, so that a missing name is reported where kube-apiserver reports it.
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, webhook.ValidateWebhookService(ccPath.Child("service"), cc.Service.Name, cc.Service.Namespace, cc.Service.Path, port)...)
	}
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(h.matchConditions, opts, path.Child("matchConditions"))...)
	}
	return errs
}

func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := r.Operations
	if len(ops) == 0 {
		errs = append(errs, field.Required(path.Child("operations"), ""))
	}
	if len(ops) > 1 && slices.Contains(ops, admissionregistrationv1.OperationAll) {
		errs = append(errs, field.Invalid(path.Child("operations"), ops, "if '*' is present, must not specify other operations"))
	}
	for i, op := range ops {
		if !slices.Contains(ruleOperations, string(op)) {
			errs = append(errs, field.NotSupported(path.Child("operations").Index(i), op, ruleOperations))
		}
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(path.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(path.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(path.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(path.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(path.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateRuleResources(r.Resources, path.Child("resources"))...)
	if s := r.Scope; s != nil && !slices.Contains(ruleScopes, string(*s)) {
		errs = append(errs, field.NotSupported(path.Child("scope"), *s, ruleScopes))
	}
	return errs
}

// validateRuleResources checks a rule's resources, subresources allowed: "x/*" covers every
// subresource of x and "*/y" subresource y of every resource, so neither may be given beside
// what it covers; "*/*" stands alone, and "*" beside resources without subresources.
func validateRuleResources(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	anySub := map[string]bool{} // x of "x/*"
	anyRes := map[string]bool{} // y of "*/y"
	allBoth, all, plain := false, false, false
	for i, r := range resources {
		if r == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
			continue
		}
		allBoth = allBoth || r == "*/*"
		all = all || r == "*"
		res, sub, hasSub := strings.Cut(r, "/")
		if !hasSub {
			plain = r != "*" // the last resource without a subresource decides, as kube-apiserver's check does
			continue
		}
		if anySub[res] {
			errs = append(errs, field.Invalid(path.Index(i), r, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, r)))
		}
		if anyRes[sub] {
			errs = append(errs, field.Invalid(path.Index(i), r, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, r)))
		}
		if sub == "*" {
			anySub[res] = true
		}
		if res == "*" {
			anyRes[sub] = true
		}
	}
	if len(resources) > 1 && allBoth {
		errs = append(errs, field.Invalid(path, resources, "if '*/*' is present, must not specify other resources"))
	}
	if all && plain {
		errs = append(errs, field.Invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

func validateReviewVersions(versions []string, requireRecognized bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(versions) == 0 {
		return append(errs, field.Required(path, "must specify one of "+strings.Join(reviewVersions, ", ")))
	}
	seen := map[string]bool{}
	recognized := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(path.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, msg))
		}
		recognized = recognized || acceptedReviewVersion(v)
	}
	if requireRecognized && !recognized {
		errs = append(errs, field.Invalid(path, versions, "must include at least one of "+strings.Join(reviewVersions, ", ")))
	}
	return errs
}

func validateMatchConditions(conds []admissionregistrationv1.MatchCondition, opts webhookValidationOptions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(path, len(conds), 64))
	}
	names := map[string]bool{}
	for i, c := range conds {
		p := path.Index(i)
		if expr := strings.TrimSpace(c.Expression); expr == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else {
			errs = append(errs, compileMatchCondition(expr, opts.storedExpressions[expr], p.Child("expression"))...)
		}
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		if c.Name != "" {
			if names[c.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
			}
			names[c.Name] = true
		}
	}
	return errs
}

// matchConditionCompiler is kube-apiserver's stateless CEL compiler of match conditions, made
// once.
var matchConditionCompiler = sync.OnceValue(func() plugincel.Compiler {
	return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

// compileMatchCondition compiles expr as kube-apiserver compiles a match condition (with the
// authorizer's variables); stored says the old object had it (the stored expressions' library).
func compileMatchCondition(expr string, stored bool, path *field.Path) field.ErrorList {
	envType := environment.NewExpressions
	if stored {
		envType = environment.StoredExpressions
	}
	cond := &matchconditions.MatchCondition{Expression: expr}
	res := matchConditionCompiler().CompileCELExpression(cond, plugincel.OptionalVariableDeclarations{HasAuthorizer: true}, envType)
	if res.Error == nil {
		return nil
	}
	if e := res.Error; e != nil {
		switch e.Type {
		case cel.ErrorTypeRequired:
			return field.ErrorList{field.Required(path, e.Detail)}
		case cel.ErrorTypeInvalid:
			return field.ErrorList{field.Invalid(path, expr, e.Detail)}
		case cel.ErrorTypeInternal:
			return field.ErrorList{field.InternalError(path, e)}
		}
	}
	return field.ErrorList{field.InternalError(path, fmt.Errorf("unsupported error type: %w", res.Error))}
}
