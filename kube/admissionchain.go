package kube

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	admissionapi "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
)

// AdmissionPlugins are kube-apiserver admission plugins (k8s.io/apiserver/pkg/admission) that
// the REST front runs on every create, update and patch of an object, at the points of the
// write where kube-apiserver's admission chain runs them: the mutating plugins
// (admissionapi.MutationInterface), in order, after the object is decoded and defaulted and before
// it is validated, again if one asks to be reinvoked (reinvocationPolicy IfNeeded), and the
// objects they change defaulted (and a custom resource pruned) again; the validating ones
// (admissionapi.ValidationInterface) after it is validated. Give them to Options.Plugins and Set
// them when they are ready: the admission webhook plugins (package kube/webhooks) read their
// configurations through a client of the front itself, so they are made after it.
//
// With plugins set, the front admits writes outside the fake apiserver's lock
// (rest.CallingAdmission), since a webhook is a call out of the process. Safe for concurrent use.
type AdmissionPlugins struct {
	plugins atomic.Pointer[[]admissionapi.Interface]
}

// Set replaces the plugins run.
func (p *AdmissionPlugins) Set(plugins ...admissionapi.Interface) {
	p.plugins.Store(&plugins)
}

func (p *AdmissionPlugins) get() []admissionapi.Interface {
	if p == nil {
		return nil
	}
	if ps := p.plugins.Load(); ps != nil {
		return *ps
	}
	return nil
}

// CallsOut: with plugins set, every write is admitted outside the server's lock.
func (a admission) CallsOut(rest.Write) bool { return len(a.plugins.get()) > 0 }

// AdmitDelete runs the plugins on the delete of obj: the mutating ones (which cannot change
// what a delete removes), then the validating ones.
func (a admission) AdmitDelete(ctx context.Context, w rest.Write, obj *unstructured.Unstructured, opts metav1.DeleteOptions) error {
	stages := a.stagesFor(&rest.AdmitRequest{Write: w, Old: obj}, nil)
	if stages == nil {
		return nil
	}
	stages.delete = &opts
	if _, err := stages.mutate(ctx, nil); err != nil {
		return err
	}
	return stages.validate(ctx, nil)
}

// pluginStages runs the plugins on one write (see AdmissionPlugins); nil runs nothing.
type pluginStages struct {
	plugins []admissionapi.Interface
	req     *rest.AdmitRequest
	oi      *objectInterfaces
	// delete is the options of a delete (req.Old the object deleted), nil for other writes.
	delete *metav1.DeleteOptions
}

// stagesFor returns the stages of req's write, nil without plugins. defaulter is what the
// object a mutating plugin changed gets again (a custom resource's pruning and defaulting).
func (a admission) stagesFor(req *rest.AdmitRequest, defaulter func(*unstructured.Unstructured)) *pluginStages {
	plugins := a.plugins.get()
	if len(plugins) == 0 {
		return nil
	}
	return &pluginStages{plugins: plugins, req: req, oi: &objectInterfaces{req: req, defaulter: defaulter}}
}

// attributes are kube-apiserver's admission attributes of the write of obj.
func (s *pluginStages) attributes(ctx context.Context, obj *unstructured.Unstructured) admissionapi.Attributes {
	req := s.req
	op := admissionapi.Create
	var options runtime.Object = &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, FieldValidation: req.FieldValidation}
	var old runtime.Object
	if req.Old != nil {
		op, old = admissionapi.Update, req.Old
		options = &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, FieldValidation: req.FieldValidation}
	}
	if req.DryRun {
		switch o := options.(type) {
		case *metav1.CreateOptions:
			o.DryRun = []string{metav1.DryRunAll}
		case *metav1.UpdateOptions:
			o.DryRun = []string{metav1.DryRunAll}
		}
	}
	if s.delete != nil {
		op, old = admissionapi.Delete, req.Old
		o := s.delete.DeepCopy()
		o.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}
		options = o
	}
	name := req.Name
	if name == "" && obj != nil {
		name = obj.GetName()
	}
	u, ok := genericrequest.UserFrom(ctx)
	if !ok {
		// informersim serve authenticates no one: its requests are anonymous.
		u = &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	}
	var object runtime.Object
	if obj != nil {
		object = obj // not a typed nil: a delete has no object
	}
	return admissionapi.NewAttributesRecord(object, old, req.GVK, req.Namespace, name, req.Resource, req.Subresource, op, options, req.DryRun, u)
}

// warningsToFront passes the warnings the plugins add (k8s.io/apiserver/pkg/warning, a
// webhook's warnings) on to the front's answer, as kube-apiserver's Warning headers.
type warningsToFront struct{ ctx context.Context }

func (w warningsToFront) AddWarning(_, text string) { rest.AddWarning(w.ctx, text) }

// mutate runs the mutating plugins on obj, reinvoking them once if one asks; it returns obj as
// they left it.
func (s *pluginStages) mutate(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if s == nil {
		return obj, nil
	}
	ctx = warning.WithWarningRecorder(ctx, warningsToFront{ctx})
	attrs := s.attributes(ctx, obj)
	run := func() error {
		for _, p := range s.plugins {
			m, ok := p.(admissionapi.MutationInterface)
			if !ok || !p.Handles(attrs.GetOperation()) {
				continue
			}
			if err := m.Admit(ctx, attrs, s.oi); err != nil {
				return err
			}
		}
		return nil
	}
	if err := run(); err != nil {
		return nil, err
	}
	if rc := attrs.GetReinvocationContext(); rc.ShouldReinvoke() {
		rc.SetIsReinvoke()
		if err := run(); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// validate runs the validating plugins on obj, as it will be stored.
func (s *pluginStages) validate(ctx context.Context, obj *unstructured.Unstructured) error {
	if s == nil {
		return nil
	}
	ctx = warning.WithWarningRecorder(ctx, warningsToFront{ctx})
	attrs := s.attributes(ctx, obj)
	for _, p := range s.plugins {
		v, ok := p.(admissionapi.ValidationInterface)
		if !ok || !p.Handles(attrs.GetOperation()) {
			continue
		}
		if err := v.Validate(ctx, attrs, s.oi); err != nil {
			return err
		}
	}
	return nil
}

// objectInterfaces are admission.ObjectInterfaces for the unstructured objects of one write:
// every kind is an *unstructured.Unstructured; a change of version (a webhook that matched an
// equivalent version, matchPolicy Equivalent) is conversion None, the apiVersion rewritten, as
// for the versions of a CustomResourceDefinition, and refused for built-in kinds, whose versions
// differ in more than their apiVersion.
type objectInterfaces struct {
	req       *rest.AdmitRequest
	defaulter func(*unstructured.Unstructured)
}

var unstructuredTyper = crdserverscheme.NewUnstructuredObjectTyper()

func (o *objectInterfaces) GetObjectCreater() runtime.ObjectCreater { return o }
func (o *objectInterfaces) GetObjectTyper() runtime.ObjectTyper     { return unstructuredTyper }
func (o *objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter {
	return o
}
func (o *objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return o }
func (o *objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o
}

// New returns an empty object of kind gvk.
func (o *objectInterfaces) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// Default is the defaulting kube-apiserver repeats on an object a mutating webhook patched.
func (o *objectInterfaces) Default(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok && o.defaulter != nil {
		o.defaulter(u)
	}
}

// Convert copies in into out, both *unstructured.Unstructured, setting out's apiVersion when it
// has one of its own (conversion None).
func (o *objectInterfaces) Convert(in, out, _ any) error {
	uin, ok1 := in.(*unstructured.Unstructured)
	uout, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("kube: admission converts unstructured objects only, not %T to %T", in, out)
	}
	target := uout.GroupVersionKind()
	if !target.Empty() && target.GroupKind() == uin.GroupVersionKind().GroupKind() && target.Version != uin.GroupVersionKind().Version {
		if o.req.Definition == nil {
			return fmt.Errorf("kube: %s cannot be converted to %s: informersim converts the versions of custom resources only", uin.GroupVersionKind(), target)
		}
		c := uin.DeepCopy()
		c.SetAPIVersion(target.GroupVersion().String())
		uout.Object = c.Object
		return nil
	}
	uout.Object = uin.Object
	return nil
}

// ConvertToVersion returns in at gv's version of its kind.
func (o *objectInterfaces) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("kube: admission converts unstructured objects only, not %T", in)
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("kube: no version of %s for %v", u.GroupVersionKind(), gv)
	}
	out, _ := o.New(target)
	return out, o.Convert(u, out, nil)
}

func (o *objectInterfaces) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// EquivalentResourcesFor returns the versions of resource that the front serves: those of the
// write's CustomResourceDefinition, or of the built-in kind.
func (o *objectInterfaces) EquivalentResourcesFor(resource schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, v := range o.versions(resource.GroupResource()) {
		out = append(out, resource.GroupResource().WithVersion(v.version))
	}
	if !slices.Contains(out, resource) {
		out = append([]schema.GroupVersionResource{resource}, out...)
	}
	return out
}

// KindFor returns the kind the resource's version serves (its subresource's: status keeps the
// kind, scale is autoscaling/v1 Scale).
func (o *objectInterfaces) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if subresource == "scale" {
		return schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	}
	for _, v := range o.versions(resource.GroupResource()) {
		if v.version == resource.Version {
			return resource.GroupVersion().WithKind(v.kind)
		}
	}
	return schema.GroupVersionKind{}
}

type servedVersion struct{ version, kind string }

// versions returns the served versions of gr: the definition's, for a custom resource of the
// write's definition, else the built-in resources'.
func (o *objectInterfaces) versions(gr schema.GroupResource) []servedVersion {
	var out []servedVersion
	if d := o.req.Definition; d != nil {
		group, _, _ := unstructured.NestedString(d.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(d.Object, "spec", "names", "plural")
		kind, _, _ := unstructured.NestedString(d.Object, "spec", "names", "kind")
		if gr != (schema.GroupResource{Group: group, Resource: plural}) {
			return nil
		}
		versions, _, _ := unstructured.NestedSlice(d.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			if served, _ := m["served"].(bool); served {
				name, _ := m["name"].(string)
				out = append(out, servedVersion{name, kind})
			}
		}
		return out
	}
	for _, r := range fakeapi.BuiltinResources() {
		if r.GVR.GroupResource() == gr {
			out = append(out, servedVersion{r.GVR.Version, r.Kind})
		}
	}
	return out
}
