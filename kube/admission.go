package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/informersim/informersim/fakeapi/rest"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/jsonpath"
)

// admission is the rest.Admission of this module: CustomResourceDefinitions and custom resources
// admitted with k8s.io/apiextensions-apiserver's own code, as kube-apiserver admits them.
//
// A CustomResourceDefinition is decoded into its Go type, defaulted (apiextensions/v1's
// defaulters), converted to the internal type and put through the registry strategy of
// kube-apiserver's apiextensions storage: PrepareForCreate or PrepareForUpdate (status reset,
// generation, storedVersions), then Validate or ValidateUpdate (every rule of
// ValidateCustomResourceDefinition: names, versions, structural schemas, defaults, CEL rules
// compiled and costed). The definition stored is what the strategy leaves, back in v1.
//
// A custom resource of a definition is handled as kube-apiserver's custom resource handler
// handles it on the way from the request body to storage: unknown fields pruned by the structural
// schema (unless x-kubernetes-preserve-unknown-fields or the definition's
// preserveUnknownFields), nulls of non-nullable fields dropped, metadata of embedded resources
// coerced, defaults applied; then the custom resource strategy (status reset, schema validation
// with kube-apiserver's field errors, metadata, list-type invariants, CEL
// x-kubernetes-validations with oldSelf on updates, ratcheting), or the status strategy for
// /status writes. With fieldValidation=Strict a pruned field is a 400, as kube-apiserver's strict
// decoding makes it; with Warn, its default, a warning (rest.AddWarning).
//
// Objects of built-in kinds get kube-apiserver's defaults (defaults.go) on every write to the
// main resource; custom resources given without a definition pass through unchanged.
//
// With AdmissionPlugins set (Options.Plugins), each write also goes through them: the mutating
// ones after the defaults above, the validating ones after the validation (a
// CustomResourceDefinition meets the mutating plugins before its own defaults).
type admission struct {
	defs    *definitions
	plugins *AdmissionPlugins
}

func (a admission) Admit(ctx context.Context, req *rest.AdmitRequest) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	var err error
	switch {
	case req.GVK == crdGVK:
		stages := a.stagesFor(req, nil)
		if req.Object, err = stages.mutate(ctx, req.Object); err != nil {
			return nil, err
		}
		if out, err = admitDefinition(ctx, req); err != nil {
			return nil, err
		}
		return out, stages.validate(ctx, out)
	case req.Definition != nil:
		d, err := a.defs.get(req.Definition, req.GVK)
		if err != nil {
			return nil, err
		}
		return d.admit(ctx, req, a.stagesFor(req, d.prune))
	case req.Builtin && req.Subresource == "":
		// Decoded into its Go type first, as kube-apiserver decodes a body (builtins.go).
		if req.Object, err = typedBuiltin(ctx, req); err != nil {
			return nil, err
		}
		defaults := func(u *unstructured.Unstructured) { defaultBuiltin(req.GVK, u.Object) }
		defaults(req.Object)
		stages := a.stagesFor(req, defaults)
		if out, err = stages.mutate(ctx, req.Object); err != nil {
			return nil, err
		}
		if err := validateBuiltin(req, out); err != nil {
			return nil, err
		}
		return out, stages.validate(ctx, out)
	case req.Builtin && req.Subresource == "status":
		return typedBuiltin(ctx, req)
	}
	stages := a.stagesFor(req, nil)
	if out, err = stages.mutate(ctx, req.Object); err != nil {
		return nil, err
	}
	return out, stages.validate(ctx, out)
}

var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// validateBuiltin validates obj, the object a write of a built-in kind stores, for the kinds
// whose registry validation this module has (webhookconfig.go): a 422 with kube-apiserver's
// field errors, nil for a valid object or another kind.
func validateBuiltin(req *rest.AdmitRequest, obj *unstructured.Unstructured) error {
	errs, ok, err := validateWebhookConfiguration(req.GVK, obj, req.Old)
	switch {
	case !ok:
		return nil
	case err != nil:
		return apierrors.NewBadRequest(err.Error())
	case len(errs) > 0:
		return apierrors.NewInvalid(req.GVK.GroupKind(), obj.GetName(), errs)
	}
	return nil
}

// extensionsScheme holds apiextensions' internal and v1 types, their conversions and defaulters.
var extensionsScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

var (
	definitionStrategy       = customresourcedefinition.NewStrategy(extensionsScheme)
	definitionStatusStrategy = customresourcedefinition.NewStatusStrategy(extensionsScheme)
)

// admitDefinition admits a CustomResourceDefinition (see admission).
func admitDefinition(ctx context.Context, req *rest.AdmitRequest) (*unstructured.Unstructured, error) {
	// A field the Go type lacks is dropped, as decoding into the type drops it: with
	// fieldValidation=Strict it is a 400, as kube-apiserver's strict decoding makes it, with Warn
	// (the default) a warning.
	strict, warn := fieldValidation(req.FieldValidation)
	toInternal := func(u *unstructured.Unstructured, track bool) (*apiextensions.CustomResourceDefinition, error) {
		if track {
			var probe apiextensionsv1.CustomResourceDefinition
			err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &probe, true)
			if se, ok := runtime.AsStrictDecodingError(err); ok {
				if strict {
					return nil, apierrors.NewBadRequest(err.Error())
				}
				for _, e := range se.Errors() {
					rest.AddWarning(ctx, e.Error())
				}
			}
		}
		return toInternalDropping(u)
	}
	obj, err := toInternal(req.Object, strict || warn)
	if err != nil {
		return nil, err
	}
	var errs field.ErrorList
	switch {
	case req.Old == nil:
		definitionStrategy.PrepareForCreate(ctx, obj)
		errs = definitionStrategy.Validate(ctx, obj)
	default:
		old, err := toInternal(req.Old, false)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if req.Subresource == "status" {
			definitionStatusStrategy.PrepareForUpdate(ctx, obj, old)
			errs = definitionStatusStrategy.ValidateUpdate(ctx, obj, old)
		} else {
			definitionStrategy.PrepareForUpdate(ctx, obj, old)
			errs = definitionStrategy.ValidateUpdate(ctx, obj, old)
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(crdGVK.GroupKind(), obj.Name, errs)
	}
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := extensionsScheme.Convert(obj, v1, nil); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v1)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := &unstructured.Unstructured{Object: m}
	out.SetGroupVersionKind(crdGVK)
	return out, nil
}

// fieldValidation says what a request's fieldValidation parameter asks for unknown fields:
// strict, a 400; warn (kube-apiserver's default, the parameter unset), a warning each; neither
// (Ignore), nothing.
func fieldValidation(v string) (strict, warn bool) {
	switch {
	case strings.EqualFold(v, metav1.FieldValidationStrict):
		return true, false
	case strings.EqualFold(v, metav1.FieldValidationIgnore):
		return false, false
	}
	return false, true
}

// toInternalDropping is a CustomResourceDefinition decoded, defaulted and converted to the
// internal type, dropping the fields its Go type lacks.
func toInternalDropping(u *unstructured.Unstructured) (*apiextensions.CustomResourceDefinition, error) {
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v1); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition: %v", err))
	}
	extensionsScheme.Default(v1)
	in := &apiextensions.CustomResourceDefinition{}
	if err := extensionsScheme.Convert(v1, in, nil); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return in, nil
}

// maxGeneratedNameBaseLength is how much of generateName kube-apiserver's name generator keeps
// before its five random characters (names.SimpleNameGenerator: 63 - 5).
const maxGeneratedNameBaseLength = 58

// maxDefinitions bounds the definitions compiled and kept; beyond it the cache starts again.
const maxDefinitions = 256

// definitions compiles what admitting the custom resources of a definition needs, once per
// definition, kind and generation (a spec change bumps the generation). Safe for concurrent use.
type definitions struct {
	mu    sync.Mutex
	byKey map[definitionKey]*definition
}

type definitionKey struct {
	uid        types.UID
	generation int64
	gvk        schema.GroupVersionKind
}

// definition is one compiled definition: the structural schema of the version served and the
// registry strategies built from it, as kube-apiserver's custom resource handler builds them.
type definition struct {
	gvk             schema.GroupVersionKind
	structural      *structuralschema.Structural // nil: no schema (preserveUnknownFields)
	preserveUnknown bool
	strategy        interface {
		PrepareForCreate(ctx context.Context, obj runtime.Object)
		PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
		Validate(ctx context.Context, obj runtime.Object) field.ErrorList
		ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	}
	status interface {
		PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
		ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	}
	// schema is the openAPIV3Schema of the version in JSON (server-side apply's type converter).
	schema []byte
	// table is the version's table convertor (nil if its columns do not parse), dateColumns a
	// parsed path for each of its date columns (tables.go).
	table       genericrest.TableConvertor
	dateColumns []*jsonpath.JSONPath
}

func (ds *definitions) get(u *unstructured.Unstructured, gvk schema.GroupVersionKind) (*definition, error) {
	key := definitionKey{uid: u.GetUID(), generation: u.GetGeneration(), gvk: gvk}
	ds.mu.Lock()
	d := ds.byKey[key]
	ds.mu.Unlock()
	if d != nil {
		return d, nil
	}
	d, err := compileDefinition(u, gvk)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.byKey == nil || len(ds.byKey) >= maxDefinitions {
		ds.byKey = map[definitionKey]*definition{}
	}
	ds.byKey[key] = d
	return d, nil
}

// compileDefinition builds the definition of gvk's version from u, a CustomResourceDefinition.
func compileDefinition(u *unstructured.Unstructured, gvk schema.GroupVersionKind) (*definition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, fmt.Errorf("kube: definition %s: %w", u.GetName(), err)
	}
	var version *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == gvk.Version {
			version = &crd.Spec.Versions[i]
		}
	}
	if version == nil {
		return nil, fmt.Errorf("kube: definition %s has no version %q", crd.Name, gvk.Version)
	}
	d := &definition{gvk: gvk, preserveUnknown: crd.Spec.PreserveUnknownFields}
	var internal *apiextensions.JSONSchemaProps
	if version.Schema != nil && version.Schema.OpenAPIV3Schema != nil {
		v := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(version.Schema, v, nil); err != nil {
			return nil, fmt.Errorf("kube: definition %s: %w", crd.Name, err)
		}
		internal = v.OpenAPIV3Schema
		s, err := structuralschema.NewStructural(internal)
		if err != nil && !crd.Spec.PreserveUnknownFields {
			return nil, fmt.Errorf("kube: definition %s: the schema of %s is not structural: %w", crd.Name, gvk.Version, err)
		}
		if err == nil {
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("kube: definition %s: %w", crd.Name, err)
			}
			d.structural = s
		}
		if d.schema, err = json.Marshal(version.Schema.OpenAPIV3Schema); err != nil {
			return nil, fmt.Errorf("kube: definition %s: %w", crd.Name, err)
		}
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("kube: definition %s: %w", crd.Name, err)
	}
	var statusSpec *apiextensions.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	var scaleSpec *apiextensions.CustomResourceSubresourceScale
	if subs := version.Subresources; subs != nil {
		if subs.Status != nil {
			statusSpec = &apiextensions.CustomResourceSubresourceStatus{}
			if internal != nil {
				if st, ok := internal.Properties["status"]; ok {
					if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
						return nil, fmt.Errorf("kube: definition %s: %w", crd.Name, err)
					}
				}
			}
		}
		if subs.Scale != nil {
			scaleSpec = &apiextensions.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subs.Scale, scaleSpec, nil); err != nil {
				return nil, fmt.Errorf("kube: definition %s: %w", crd.Name, err)
			}
		}
	}
	strategy := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		gvk, validator, statusValidator, d.structural, statusSpec, scaleSpec, version.SelectableFields)
	d.strategy = strategy
	d.status = customresource.NewStatusStrategy(strategy)
	d.table, d.dateColumns = compileTable(printerColumns(version))
	return d, nil
}

// prune prunes and defaults obj, a custom resource of d a mutating admission plugin changed, by
// the schema, as kube-apiserver does before it stores it.
func (d *definition) prune(obj *unstructured.Unstructured) {
	if d.structural == nil {
		return
	}
	apiVersion, kind := obj.GetAPIVersion(), obj.GetKind()
	meta, hasMeta, _, err := schemaobjectmeta.GetObjectMetaWithOptions(obj.Object, schemaobjectmeta.ObjectMetaOptions{})
	if !d.preserveUnknown {
		structuralpruning.PruneWithOptions(obj.Object, d.structural, true, structuralschema.UnknownFieldPathOptions{})
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj.Object, d.structural)
	}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	if err == nil && hasMeta {
		_ = schemaobjectmeta.SetObjectMeta(obj.Object, meta)
	}
	structuraldefaulting.Default(obj.Object, d.structural)
}

// admit admits one custom resource of d (see admission), through stages' plugins (nil: none).
func (d *definition) admit(ctx context.Context, req *rest.AdmitRequest, stages *pluginStages) (*unstructured.Unstructured, error) {
	obj := req.Object
	if obj.GetAPIVersion() == "" && obj.GetKind() == "" {
		obj.SetGroupVersionKind(d.gvk)
	}
	// As kube-apiserver's decoding of a custom resource: the root's apiVersion, kind and
	// metadata are set aside (metadata as an ObjectMeta: fields it lacks are dropped), the rest
	// pruned and coerced by the schema, and the three put back.
	strict, warn := fieldValidation(req.FieldValidation)
	track := strict || warn
	apiVersion, kind := obj.GetAPIVersion(), obj.GetKind()
	meta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: track})
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if d.structural != nil {
		if !d.preserveUnknown {
			unknown = append(unknown, structuralpruning.PruneWithOptions(obj.Object, d.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: track})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj.Object, d.structural)
		}
		err, paths := schemaobjectmeta.CoerceWithOptions(nil, obj.Object, d.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: track})
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		unknown = append(unknown, paths...)
	}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	if hasMeta {
		if err := schemaobjectmeta.SetObjectMeta(obj.Object, meta); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	if len(unknown) > 0 {
		msgs := make([]string, len(unknown))
		for i, p := range unknown {
			msgs[i] = fmt.Sprintf("unknown field %q", p)
		}
		if strict {
			return nil, apierrors.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
		}
		for _, m := range msgs {
			rest.AddWarning(ctx, m)
		}
	}
	if d.structural != nil {
		structuraldefaulting.Default(obj.Object, d.structural)
	}
	if obj, err = stages.mutate(ctx, obj); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	switch {
	case req.Old == nil:
		d.strategy.PrepareForCreate(ctx, obj)
		// kube-apiserver generates the name of an object with generateName before it validates
		// it; fakeapi generates it after (with its seeded source). The validation sees a name of
		// the length the generated one will have, in the generator's alphabet.
		placeholder := obj.GetName() == "" && obj.GetGenerateName() != ""
		if placeholder {
			base := obj.GetGenerateName()
			if len(base) > maxGeneratedNameBaseLength {
				base = base[:maxGeneratedNameBaseLength]
			}
			obj.SetName(base + "bbbbb")
		}
		errs = d.strategy.Validate(ctx, obj)
		if placeholder {
			obj.SetName("")
		}
	case req.Subresource == "status":
		d.status.PrepareForUpdate(ctx, obj, req.Old)
		errs = d.status.ValidateUpdate(ctx, obj, req.Old)
	default:
		d.strategy.PrepareForUpdate(ctx, obj, req.Old)
		errs = d.strategy.ValidateUpdate(ctx, obj, req.Old)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(d.gvk.GroupKind(), obj.GetName(), errs)
	}
	return obj, stages.validate(ctx, obj)
}
