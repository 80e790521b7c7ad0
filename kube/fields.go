package kube

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Kind says which field manager a write needs: kube-apiserver keeps one per kind and
// subresource, with the schema of the kind.
type Kind struct {
	GVK schema.GroupVersionKind
	// Builtin says the kind is one of k8s.io/api's (its schema is known); otherwise it is a
	// custom resource, merged with the structural schema given for it in Options, or with a
	// deduced schema (every field atomic) if none was given.
	Builtin bool
	// Status says the resource has a /status subresource: a write to the main resource then owns
	// no status field, and one to /status owns only status fields (kube-apiserver's reset
	// fields).
	Status bool
	// Subresource is "" or "status".
	Subresource string
	// Definition and Generation name the CustomResourceDefinition of a custom resource the
	// front serves for one (rest.Write.Definition): its version's schema is the kind's, and a
	// new generation of the definition a new schema.
	Definition types.UID
	Generation int64
	// def is that definition, read only when the field manager is built; it is not part of the
	// field manager's key (the definition and generation are).
	def *unstructured.Unstructured
}

// fieldManagers builds kube-apiserver's field manager (apimachinery's managedfields) for each
// Kind on first use and keeps it. It is safe for concurrent use.
type fieldManagers struct {
	schemas map[schema.GroupVersionKind]managedfields.TypeConverter // custom resources with a schema

	mu    sync.Mutex
	built map[Kind]*managedfields.FieldManager
}

// builtinTypeConverter is the type converter of k8s.io/api's kinds, built once, at the first
// write of a built-in kind (or by Preload): it indexes the schema of every kind of the scheme,
// which cost about as much as registering the scheme when each REST front built its own, and
// about a quarter of a second of a process's start when every front built it at once. It is
// only read once built.
var builtinTypeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(scheme.Scheme)
})

// definitionTypeConverter is the type converter of CustomResourceDefinitions, whose schema is
// apiextensions-apiserver's (client-go's scheme lacks the kind).
var definitionTypeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfiguration.NewTypeConverter(extensionsScheme)
})

// Preload builds, on a goroutine of its own, what the first writes of a CustomResourceDefinition
// and of a built-in kind through a front need and take a quarter of a second or more to build
// (the type converters behind their managedFields), so that a process serving a front (informersim serve, the
// envtest stand-in) can listen meanwhile: a write that needs it first waits for it.
func Preload() {
	go func() {
		definitionTypeConverter() // an envtest suite's first writes are its CustomResourceDefinitions
		builtinTypeConverter()
	}()
}

func newFieldManagers(schemas map[schema.GroupVersionKind]managedfields.TypeConverter) *fieldManagers {
	return &fieldManagers{
		schemas: schemas,
		built:   map[Kind]*managedfields.FieldManager{},
	}
}

// statusResetPaths are the fields a write to /status never owns: fakeapi's /status writes
// change only .status (docs/fakeapi.md §5.5), so whatever else an applied or updated object
// says is dropped, and must not be owned either.
var statusResetPaths = []fieldpath.Path{
	fieldpath.MakePathOrDie("spec"),
	fieldpath.MakePathOrDie("metadata", "labels"),
	fieldpath.MakePathOrDie("metadata", "annotations"),
	fieldpath.MakePathOrDie("metadata", "finalizers"),
	fieldpath.MakePathOrDie("metadata", "ownerReferences"),
}

// maxFieldManagers bounds the field managers kept (one per kind, subresource and generation of
// a definition).
const maxFieldManagers = 4096

// get returns the field manager of k.
func (m *fieldManagers) get(k Kind) (*managedfields.FieldManager, error) {
	if k.Subresource != "" && (k.Subresource != "status" || !k.Status) {
		return nil, fmt.Errorf("kube: no field manager for subresource %q of %v", k.Subresource, k.GVK)
	}
	def := k.def
	k.def = nil
	m.mu.Lock()
	defer m.mu.Unlock()
	if fm := m.built[k]; fm != nil {
		return fm, nil
	}
	if len(m.built) >= maxFieldManagers {
		clear(m.built) // definitions changed many times: build again what is used
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if k.Status {
		set := fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
		if k.Subresource == "status" {
			set = fieldpath.NewSet(statusResetPaths...)
		}
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(k.GVK.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
		}
	}
	gv := k.GVK.GroupVersion()
	var fm *managedfields.FieldManager
	var err error
	switch tc, hasSchema := m.schemas[k.GVK]; {
	case def != nil && versionSchema(def, k.GVK.Version) != "":
		tc, err = structuralConverter(k.GVK, []byte(versionSchema(def, k.GVK.Version)))
		if err != nil {
			return nil, err
		}
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, sameVersion{}, noDefaults{}, unstructuredCreater{}, k.GVK, gv, k.Subresource, reset)
	case k.GVK == crdGVK:
		fm, err = managedfields.NewDefaultFieldManager(definitionTypeConverter(), sameVersion{}, noDefaults{}, unstructuredCreater{}, k.GVK, gv, k.Subresource, reset)
	case k.Builtin:
		fm, err = managedfields.NewDefaultFieldManager(builtinTypeConverter(), sameVersion{}, noDefaults{}, unstructuredCreater{}, k.GVK, gv, k.Subresource, reset)
	case hasSchema:
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, sameVersion{}, noDefaults{}, unstructuredCreater{}, k.GVK, gv, k.Subresource, reset)
	default:
		fm, err = managedfields.NewDefaultCRDFieldManager(managedfields.NewDeducedTypeConverter(), sameVersion{}, noDefaults{}, unstructuredCreater{}, k.GVK, gv, k.Subresource, reset)
	}
	if err != nil {
		return nil, err
	}
	m.built[k] = fm
	return fm, nil
}

// newObject is the empty object of k a create or an apply that creates starts from.
func newObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u
}

// The field manager converts objects between the version of a request and the storage
// version, defaults them, and creates empty ones. fakeapi serves each kind in one version, stores
// what it is given and defaults nothing, so the three are identities on unstructured objects.
type (
	sameVersion         struct{}
	noDefaults          struct{}
	unstructuredCreater struct{}
)

func (sameVersion) Convert(in, out, context any) error {
	return errors.New("kube: conversion between types is not supported")
}

// ConvertToVersion returns in, or the Unstructured of a managedObject (track's objects): the
// field manager converts the result to its typed form, and its type converters take only an
// *unstructured.Unstructured as unstructured content.
func (sameVersion) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return unwrapManaged(in), nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (noDefaults) Default(runtime.Object) {}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	return newObject(gvk), nil
}

// stampTimes sets the time of every managedFields entry of out that the write changed (one that
// is not an entry of live, unchanged) to now. The field manager stamps them with the wall clock;
// fakeapi's timestamps come from its own clock, so a run is the same whatever the time of day.
//
// When both lists are in the canonical form the field manager writes (canonicalEntries), the
// entries are compared as maps and only the changed entries' times are rewritten, which is what
// decoding both lists, comparing the typed entries and encoding out's again gives (that took
// about a tenth of an update's CPU). Any other form takes the typed path.
func stampTimes(live, out *unstructured.Unstructured, now time.Time) {
	stamp := now.UTC().Truncate(time.Second)
	outEntries, ok := canonicalEntries(out)
	if !ok {
		stampTypedTimes(live, out, stamp)
		return
	}
	liveEntries, ok := canonicalEntries(live)
	if !ok {
		stampTypedTimes(live, out, stamp)
		return
	}
	stampText := ""
	for _, e := range outEntries {
		kept := false
		for _, l := range liveEntries {
			if equalCanonical(e.(map[string]any), l.(map[string]any)) {
				kept = true
				break
			}
		}
		if !kept {
			if stampText == "" {
				stampText = stamp.Format(time.RFC3339) // metav1.Time's unstructured form
			}
			e.(map[string]any)["time"] = stampText
		}
	}
}

// equalCanonical says two maps holding only strings and such maps are equal (reflect.DeepEqual
// allocates for each value it compares).
func equalCanonical(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, has := b[k]
		if !has {
			return false
		}
		switch x := av.(type) {
		case string:
			if y, isString := bv.(string); !isString || x != y {
				return false
			}
		case map[string]any:
			if y, isMap := bv.(map[string]any); !isMap || !equalCanonical(x, y) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// stampTypedTimes is stampTimes on the typed entries, for lists not in canonical form.
func stampTypedTimes(live, out *unstructured.Unstructured, stamp time.Time) {
	entries := out.GetManagedFields()
	if len(entries) == 0 {
		return
	}
	var before []metav1.ManagedFieldsEntry
	if live != nil {
		before = live.GetManagedFields()
	}
	mstamp := metav1.NewTime(stamp)
	changed := false
	for i := range entries {
		kept := false
		for j := range before {
			if reflect.DeepEqual(entries[i], before[j]) {
				kept = true
				break
			}
		}
		if !kept && (entries[i].Time == nil || !entries[i].Time.Equal(&mstamp)) {
			entries[i].Time = &mstamp
			changed = true
		}
	}
	if changed {
		out.SetManagedFields(entries)
	}
}

// entryStrings are the string fields of a ManagedFieldsEntry, by their JSON names.
var entryStrings = []string{"manager", "operation", "apiVersion", "fieldsType", "subresource"}

// canonicalEntries returns u's managedFields entries, each a map[string]any (none for a nil u),
// when each is in the form that encoding its typed entry writes (unstructured.SetManagedFields,
// as the field manager does): only the entry's known fields, no null and no empty string,
// strings as strings, the time as RFC 3339 text in UTC to the second, fieldsV1 as nested maps
// only. For such entries equal maps are equal typed entries and the other way round, and
// encoding their typed entries again gives the same maps. ok is false for any other form.
func canonicalEntries(u *unstructured.Unstructured) (entries []any, ok bool) {
	if u == nil {
		return nil, true
	}
	md, has := u.Object["metadata"]
	if !has {
		return nil, true
	}
	meta, isMap := md.(map[string]any)
	if !isMap {
		return nil, false
	}
	v, has := meta["managedFields"]
	if !has {
		return nil, true
	}
	items, isList := v.([]any)
	if !isList {
		return nil, false
	}
	for _, item := range items {
		if e, isMap := item.(map[string]any); !isMap || !canonicalEntry(e) {
			return nil, false
		}
	}
	return items, true
}

// canonicalEntry says e is a managedFields entry in canonicalEntries' form.
func canonicalEntry(e map[string]any) bool {
	known := 0
	for _, k := range entryStrings {
		if v, has := e[k]; has {
			if s, isString := v.(string); !isString || s == "" {
				return false
			}
			known++
		}
	}
	if v, has := e["time"]; has {
		known++
		text, isString := v.(string)
		if !isString {
			return false
		}
		t, err := time.Parse(time.RFC3339, text)
		if err != nil || t.UTC().Format(time.RFC3339) != text {
			return false
		}
	}
	if v, has := e["fieldsV1"]; has {
		known++
		if !onlyMaps(v) {
			return false
		}
	}
	return known == len(e)
}

// onlyMaps says v is a map[string]any whose values are all such maps.
func onlyMaps(v any) bool {
	m, isMap := v.(map[string]any)
	if !isMap {
		return false
	}
	for _, e := range m {
		if !onlyMaps(e) {
			return false
		}
	}
	return true
}
