package world

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/invariant"
)

// Op is one workload operation on the world's apiserver, as data: it can be built, printed
// (String), parsed back (Parse), scripted, generated and recorded.
type Op struct {
	Kind OpKind
	// Resource is the resource written; zero means the world's Config.DefaultResource. Any
	// served resource, cluster-scoped ones included.
	Resource schema.GroupVersionResource
	// Namespace of the object; "" means DefaultNamespace for a namespaced resource. It must
	// be "" for a cluster-scoped one.
	Namespace string
	// Name of the object. A create may leave it empty and give GenerateName instead. The
	// control-plane faults name their component with it, the webhook faults their webhook.
	Name string
	// GenerateName (create only) asks the apiserver to make a unique name with this prefix.
	GenerateName string
	// Labels and Annotations are set on the object (merged into it by an update); a delete
	// ignores them (a generated delete carries the labels drawn for its object), a patch
	// refuses them. An empty map means the same as nil.
	Labels      map[string]string
	Annotations map[string]string
	// Finalizers are the object's finalizers (create), or replace them (update) when not nil;
	// an empty, non-nil slice removes them all. Only for create and update.
	Finalizers []string
	// Content (create and update only) holds the object's top-level fields other than
	// apiVersion, kind and metadata, e.g.
	// {"data": map[string]string{"k": "v"}, "spec": map[string]any{"replicas": 3}}.
	// Apply and Script convert a copy of it to unstructured's form (string, bool, int64,
	// float64, nil, map[string]any, []any) as encoding/json would write it, and never change
	// or keep the caller's maps: every integer kind becomes int64 (a uint64 above
	// math.MaxInt64 is refused), float32 and float64 float64 (float32(0.1) is 0.1; NaN and
	// infinities are refused), json.Number int64 or float64, named string and bool types string
	// and bool, []byte its base64 string, any slice or array []any, any map with string keys
	// map[string]any, a pointer what it points to (nil: nil), and a value with its own
	// MarshalJSON or MarshalText (metav1.Time, resource.Quantity, intstr.IntOrString,
	// json.RawMessage) what that writes. Anything else (another struct, a channel, a func, a
	// complex number, a map with other keys) is refused with an error naming its path, such as
	// Content["spec"]["ports"][1] (the first in key order); convert a typed object with
	// runtime.DefaultUnstructuredConverter.ToUnstructured.
	Content map[string]any
	// PatchType and Patch are OpPatch's: types.JSONPatchType, MergePatchType,
	// StrategicMergePatchType or ApplyPatchType, and the patch document.
	PatchType types.PatchType
	Patch     string
	// Code is the HTTP code of OpCloseWatches (0: clean), OpFailNext and OpFailWebhook: an
	// error code, 400 to 599.
	Code int32
	// Verb is the request OpFailNext fails.
	Verb fakeapi.Verb
	// Duration is how long OpSleep sleeps, OpLagReplica's lag ("by" in the text form), how
	// long OpReinitReplica's replica stays not ready ("not-ready"), OpSlowWebhook's added
	// delay ("by") and how late OpSlowCall's response arrives ("by"); it must not be negative.
	Duration time.Duration
	// Replica is the apiserver replica of the replica faults (OpLagReplica to OpRouteNext) and
	// of OpStaleRead, from 0.
	Replica int
	// Count is how many revisions OpBurnRevisions consumes ("n" in the text form).
	Count int
	// Informer names the informer whose watches OpSlowConsumer cuts off ("" for every watch).
	Informer string
	// Client names the client of the apiserver a client fault is aimed at (OpCrashRestart to
	// OpHiddenChange): one its host registered with World.AddClient, such as the controller
	// clientgo's harness runs.
	Client string
	// Propagation is a delete's propagation policy (kubectl delete --cascade): Foreground,
	// Background or Orphan; empty leaves it to the apiserver (Background for most kinds). The
	// garbage collector (Config.ControlPlane) carries it out.
	Propagation metav1.DeletionPropagation
}

// validate checks what the world itself can tell is wrong with op: an unknown kind, a field the
// kind does not use, a code or verb out of range, content that cannot be JSON, a negative sleep.
// It returns op with its Content converted to unstructured's form, in new maps (jsonContent). A
// write the apiserver rejects (an empty or invalid name, a bad patch) is left to the apiserver,
// which answers as a real one does (design.md "Bad input").
func (op Op) validate() (Op, error) {
	if err := op.validateFields(); err != nil {
		return op, err
	}
	content, err := jsonContent(op.Content)
	if err != nil {
		return op, fmt.Errorf("world: op %s: %v", op.Kind, err) // the path and why are the whole story: nothing to unwrap
	}
	op.Content = content
	return op, nil
}

// validateFields is validate but for the conversion of Content's values: every field the
// kind does not take is zero, and the kind's own check passes.
func (op Op) validateFields() error {
	if !op.Kind.valid() {
		return fmt.Errorf("world: unknown op kind %v (want one of: %s)", op.Kind, strings.Join(kindNames(), ", "))
	}
	row := &opRows[op.Kind]
	for f := opField(0); f < numOpFields; f++ {
		if !f.zero(&op) && row.arg(f) == nil {
			return fmt.Errorf("world: op %s: %s", op.Kind, fieldNotFor(op.Kind, f))
		}
	}
	if row.check != nil {
		if err := row.check(op); err != nil {
			return fmt.Errorf("world: op %s: %w", op.Kind, err)
		}
	}
	return nil
}

func kindNames() []string {
	names := make([]string, 0, numOpKinds-1)
	for _, k := range OpKinds() {
		names = append(names, k.String())
	}
	return names
}

// fieldNotFor says why kind cannot take field f.
func fieldNotFor(kind OpKind, f opField) string {
	switch {
	case !kind.write() && f.object():
		return "object fields (Resource, Namespace, Name, metadata, Content) are only for writes"
	case kind == OpPatch && (f == fieldLabels || f == fieldAnnotations || f == fieldFinalizers || f == fieldContent):
		return "Labels, Annotations, Finalizers and Content are for create and update; a patch says its changes in Patch"
	case kind == OpDelete && (f == fieldFinalizers || f == fieldContent):
		return "Finalizers and Content are for create and update; a delete only names its object"
	}
	return opFieldNames[f] + " is only for " + kindsTaking(f)
}

func (r *opRow) arg(f opField) *opArg {
	for i := range r.args {
		if r.args[i].field == f {
			return &r.args[i]
		}
	}
	return nil
}

// opField is one field of Op, as the text form reads and writes it.
type opField int

const (
	fieldResource opField = iota
	fieldNamespace
	fieldName
	fieldGenerateName
	fieldLabels
	fieldAnnotations
	fieldFinalizers
	fieldContent
	fieldPatchType
	fieldPatch
	fieldVerb
	fieldCode
	fieldDuration
	fieldReplica
	fieldCount
	fieldInformer
	fieldClient
	fieldPropagation
	numOpFields
)

var opFieldNames = [numOpFields]string{"Resource", "Namespace", "Name", "GenerateName", "Labels", "Annotations",
	"Finalizers", "Content", "PatchType", "Patch", "Verb", "Code", "Duration", "Replica", "Count", "Informer", "Client", "Propagation"}

// object reports whether f describes the object a write writes.
func (f opField) object() bool { return f <= fieldContent }

// prefix reports whether f is a map written as one key=value field per entry, under keys that
// begin with the arg's key ("label:app=web").
func (f opField) prefix() bool { return f == fieldLabels || f == fieldAnnotations }

func (f opField) zero(op *Op) bool {
	switch f {
	case fieldResource:
		return op.Resource.Empty()
	case fieldNamespace:
		return op.Namespace == ""
	case fieldName:
		return op.Name == ""
	case fieldGenerateName:
		return op.GenerateName == ""
	case fieldLabels:
		return len(op.Labels) == 0
	case fieldAnnotations:
		return len(op.Annotations) == 0
	case fieldFinalizers:
		return op.Finalizers == nil
	case fieldContent:
		return op.Content == nil
	case fieldPatchType:
		return op.PatchType == ""
	case fieldPatch:
		return op.Patch == ""
	case fieldVerb:
		return op.Verb == 0
	case fieldCode:
		return op.Code == 0
	case fieldDuration:
		return op.Duration == 0
	case fieldReplica:
		return op.Replica == 0
	case fieldCount:
		return op.Count == 0
	case fieldInformer:
		return op.Informer == ""
	case fieldClient:
		return op.Client == ""
	case fieldPropagation:
		return op.Propagation == ""
	}
	invariant.Check(false, "world: unknown op field %d", int(f))
	return true
}

// format writes f's value under key with field(key, value): a map one field per entry, in key
// order (never map order in output, style.md rule 9).
func (f opField) format(op *Op, key string, field func(k, v string)) {
	switch f {
	case fieldResource:
		field(key, formatGVR(op.Resource))
	case fieldNamespace:
		field(key, op.Namespace)
	case fieldName:
		field(key, op.Name)
	case fieldGenerateName:
		field(key, op.GenerateName)
	case fieldLabels, fieldAnnotations:
		m := op.Labels
		if f == fieldAnnotations {
			m = op.Annotations
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			field(key+k, m[k])
		}
	case fieldFinalizers:
		field(key, strings.Join(op.Finalizers, ","))
	case fieldContent:
		j, err := json.Marshal(op.Content) // map keys sorted by encoding/json
		if err != nil {
			j = []byte(fmt.Sprintf("%q", err.Error()))
		}
		field(key, string(j))
	case fieldPatchType:
		pt, ok := patchNames[op.PatchType]
		if !ok {
			pt = string(op.PatchType)
		}
		field(key, pt)
	case fieldPatch:
		field(key, op.Patch)
	case fieldVerb:
		field(key, op.Verb.String())
	case fieldCode:
		field(key, strconv.Itoa(int(op.Code)))
	case fieldDuration:
		field(key, op.Duration.String())
	case fieldReplica:
		field(key, strconv.Itoa(op.Replica))
	case fieldCount:
		field(key, strconv.Itoa(op.Count))
	case fieldInformer:
		field(key, op.Informer)
	case fieldClient:
		field(key, op.Client)
	case fieldPropagation:
		field(key, string(op.Propagation))
	}
}

// parse sets f from the text v; sub is the part of the key after the arg's key (a map entry's
// own key).
func (f opField) parse(op *Op, sub, v string) error {
	var err error
	switch f {
	case fieldResource:
		op.Resource, err = ParseResource(v)
	case fieldNamespace:
		op.Namespace = v
	case fieldName:
		op.Name = v
	case fieldGenerateName:
		op.GenerateName = v
	case fieldLabels:
		if op.Labels == nil {
			op.Labels = map[string]string{}
		}
		op.Labels[sub] = v
	case fieldAnnotations:
		if op.Annotations == nil {
			op.Annotations = map[string]string{}
		}
		op.Annotations[sub] = v
	case fieldFinalizers:
		op.Finalizers = []string{}
		if v != "" {
			op.Finalizers = strings.Split(v, ",")
		}
	case fieldContent:
		op.Content = map[string]any{}
		// apimachinery's decoder keeps integers as int64, as unstructured objects hold them.
		err = utiljson.Unmarshal([]byte(v), &op.Content)
	case fieldPatchType:
		op.PatchType = types.PatchType(v)
		for pt, name := range patchNames {
			if name == v {
				op.PatchType = pt
			}
		}
	case fieldPatch:
		op.Patch = v
	case fieldVerb:
		err = fmt.Errorf("unknown verb %q", v)
		for vb := fakeapi.VerbCreate; vb <= fakeapi.VerbWatch; vb++ {
			if vb.String() == v {
				op.Verb, err = vb, nil
			}
		}
	case fieldCode:
		var c int64
		c, err = strconv.ParseInt(v, 10, 32)
		op.Code = int32(c)
	case fieldDuration:
		op.Duration, err = time.ParseDuration(v)
	case fieldReplica:
		op.Replica, err = strconv.Atoi(v)
	case fieldCount:
		op.Count, err = strconv.Atoi(v)
	case fieldInformer:
		op.Informer = v
	case fieldClient:
		op.Client = v
	case fieldPropagation:
		op.Propagation = metav1.DeletionPropagation(v)
	}
	return err
}

// argKeys maps every key of every kind's text form to its field, so that a field given to a
// kind that does not take it is refused as such, not as unknown.
// It is built by opkinds.go's init, after opRows.
var argKeys map[string]opField

// lookupArg finds the arg of row that reads key, and the part of key after a map's prefix.
func (r *opRow) lookupArg(key string) (*opArg, string) {
	for i := range r.args {
		a := &r.args[i]
		if a.field.prefix() && strings.HasPrefix(key, a.key) {
			return a, strings.TrimPrefix(key, a.key)
		}
		if !a.field.prefix() && key == a.key {
			return a, ""
		}
	}
	return nil, ""
}

// maxContentDepth bounds how deeply Content may nest (the apiserver's own bound, which also
// stops a map that contains itself).
const maxContentDepth = 64

// jsonContent returns a copy of content in unstructured's form (see Op.Content): new maps and
// slices throughout, so nothing of the caller's is shared. nil stays nil. The error names the
// path of the first value that cannot be converted, visiting map keys in sorted order so that
// the same content always names the same value.
func jsonContent(content map[string]any) (map[string]any, error) {
	if content == nil {
		return nil, nil
	}
	out := make(map[string]any, len(content))
	for _, k := range slices.Sorted(maps.Keys(content)) {
		v, err := jsonValue(content[k], 1)
		if err != nil {
			return nil, err.at(`Content[` + strconv.Quote(k) + `]`)
		}
		out[k] = v
	}
	return out, nil
}

// contentError is a value of Content that cannot be converted; path grows from the value up.
type contentError struct {
	path string
	why  string
}

func (e *contentError) at(prefix string) *contentError {
	e.path = prefix + e.path
	return e
}

func (e *contentError) Error() string { return e.path + ": " + e.why }

// jsonValue converts v as Op.Content says. The common types are switched on directly; the
// rest (named types, other element types, pointers) go through reflect.
func jsonValue(v any, depth int) (any, *contentError) {
	if depth > maxContentDepth {
		return nil, &contentError{why: fmt.Sprintf("nested deeper than %d levels", maxContentDepth)}
	}
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		return jsonFloat(x)
	case map[string]any:
		if x == nil {
			return x, nil
		}
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e, err := jsonValue(x[k], depth+1)
			if err != nil {
				return nil, err.at("[" + strconv.Quote(k) + "]")
			}
			out[k] = e
		}
		return out, nil
	case []any:
		if x == nil {
			return x, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonValue(e, depth+1)
			if err != nil {
				return nil, err.at("[" + strconv.Itoa(i) + "]")
			}
			out[i] = c
		}
		return out, nil
	case map[string]string:
		if x == nil {
			return nil, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out, nil
	case []string:
		if x == nil {
			return nil, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, &contentError{why: fmt.Sprintf("json.Number %q is not a number", string(x))}
		}
		return jsonFloat(f)
	}
	return reflectJSONValue(reflect.ValueOf(v), depth)
}

func jsonFloat(f float64) (any, *contentError) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &contentError{why: fmt.Sprintf("%v is not a JSON number", f)}
	}
	return f, nil
}

// marshaledJSONValue is the JSON value that marshal, a value's own MarshalJSON (or MarshalText),
// writes, read back in unstructured's form; an error or a panic of marshal refuses the value.
func marshaledJSONValue(t reflect.Type, marshal func() ([]byte, error)) (v any, cerr *contentError) {
	defer func() {
		if p := recover(); p != nil {
			v, cerr = nil, &contentError{why: fmt.Sprintf("%s: marshalling it panicked: %v", t, p)}
		}
	}()
	data, err := marshal()
	if err == nil {
		err = utiljson.Unmarshal(data, &v) // integers as int64, as unstructured objects hold them
	}
	if err != nil {
		return nil, &contentError{why: fmt.Sprintf("%s: %v", t, err)}
	}
	return v, nil
}

// reflectJSONValue is jsonValue for the values its switch does not name.
func reflectJSONValue(rv reflect.Value, depth int) (any, *contentError) {
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil // null, as encoding/json writes it, without calling a method on nil
	}
	switch m := rv.Interface().(type) {
	case json.Marshaler: // metav1.Time, resource.Quantity, intstr.IntOrString, json.RawMessage...
		return marshaledJSONValue(rv.Type(), m.MarshalJSON)
	case encoding.TextMarshaler: // a JSON string, as encoding/json writes it
		return marshaledJSONValue(rv.Type(), func() ([]byte, error) {
			text, err := m.MarshalText()
			if err != nil {
				return nil, err
			}
			return json.Marshal(string(text))
		})
	}
	switch rv.Kind() {
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return nil, &contentError{why: fmt.Sprintf("%s %d overflows int64", rv.Type(), u)}
		}
		return int64(u), nil
	case reflect.Float32:
		// The shortest decimal that reads back as this float32, as encoding/json writes it:
		// float32(0.1) is 0.1, not 0.10000000149011612.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(rv.Float(), 'g', -1, 32), 64)
		return jsonFloat(f)
	case reflect.Float64:
		return jsonFloat(rv.Float())
	case reflect.Pointer:
		return jsonValue(rv.Elem().Interface(), depth+1) // deeper: a pointer may point to itself
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(rv.Bytes()), nil // as encoding/json writes []byte
		}
		out := make([]any, rv.Len())
		for i := range out {
			e, err := jsonValue(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err.at("[" + strconv.Itoa(i) + "]")
			}
			out[i] = e
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, &contentError{why: fmt.Sprintf("%s has keys of type %s, not strings", rv.Type(), rv.Type().Key())}
		}
		if rv.IsNil() {
			return nil, nil
		}
		type entry struct {
			key   string
			value reflect.Value
		}
		entries := make([]entry, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			entries = append(entries, entry{it.Key().String(), it.Value()})
		}
		// The first bad value by key, never by map order (style.md rule 9).
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		out := make(map[string]any, len(entries))
		for _, en := range entries {
			e, err := jsonValue(en.value.Interface(), depth+1)
			if err != nil {
				return nil, err.at("[" + strconv.Quote(en.key) + "]")
			}
			out[en.key] = e
		}
		return out, nil
	case reflect.Struct:
		return nil, &contentError{why: fmt.Sprintf("%s is a struct: give its fields as a map[string]any "+
			"(runtime.DefaultUnstructuredConverter.ToUnstructured converts a typed object)", rv.Type())}
	}
	return nil, &contentError{why: fmt.Sprintf("%s cannot be a JSON value", rv.Type())}
}

var patchNames = map[types.PatchType]string{
	types.JSONPatchType: "json", types.MergePatchType: "merge",
	types.StrategicMergePatchType: "strategic", types.ApplyPatchType: "apply",
}

// String renders op as one line of space-separated fields that Parse reads back:
//
//	create resource=v1/pods ns=default name=a label:app=web annotation:note="two words" finalizers=f1,f2 content="{\"data\":{\"k\":\"v\"}}"
//	patch name=a patchType=merge patch="{\"metadata\":{\"labels\":{\"v\":\"2\"}}}"
//	close-watches code=410
//	fail-next verb=watch code=500
//	lag-replica replica=1 by=30s
//	sleep duration=1s
//
// The fields are those of the kind, in its order; a field at its zero value is left out (the
// world's defaults then apply) unless the kind requires it; labels and annotations print in key
// order; values with spaces, quotes or '=' are Go-quoted. A field the kind does not take is not
// printed (such an op is invalid).
func (op Op) String() string {
	var b strings.Builder
	b.WriteString(op.Kind.String())
	if !op.Kind.valid() {
		return b.String()
	}
	field := func(k, v string) {
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(quoteValue(v))
	}
	for _, a := range opRows[op.Kind].args {
		if a.required || !a.field.zero(&op) {
			a.field.format(&op, a.key, field)
		}
	}
	return b.String()
}

func formatGVR(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Version + "/" + gvr.Resource
	}
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}

// quoteValue quotes v when it would not read back as one field: empty, or with spaces, quotes,
// backslashes, '=' or non-printable characters.
func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"\\\t\n\r") {
		return strconv.Quote(v)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return strconv.Quote(v)
		}
	}
	return v
}

// Parse reads an op in String's form. Parse(op.String()) equals op for every valid op (empty
// Labels and Annotations read back as nil) whose Content holds unstructured's form; other Go
// values read back in that form (int 3 as int64 3, map[string]string as map[string]any), and
// a float64 with an integer value as int64. The parsed op is validated.
func Parse(s string) (Op, error) {
	var op Op
	fields, err := splitFields(s)
	if err != nil {
		return op, fmt.Errorf("world: Parse %q: %w", s, err)
	}
	if len(fields) == 0 {
		return op, fmt.Errorf("world: Parse %q: empty op", s)
	}
	if fields[0].value == nil {
		op.Kind, _ = ParseOpKind(fields[0].key)
	}
	if op.Kind == 0 {
		return op, fmt.Errorf("world: Parse %q: unknown op kind %q", s, fields[0].key)
	}
	row := &opRows[op.Kind]
	seen := map[string]bool{}
	given := map[opField]bool{}
	for _, f := range fields[1:] {
		if f.value == nil {
			return op, fmt.Errorf("world: Parse %q: field %q has no value", s, f.key)
		}
		if seen[f.key] {
			return op, fmt.Errorf("world: Parse %q: field %q given twice", s, f.key)
		}
		seen[f.key] = true
		a, sub := row.lookupArg(f.key)
		if a == nil {
			field, known := argKeys[f.key]
			for _, prefix := range []string{"label:", "annotation:"} {
				if strings.HasPrefix(f.key, prefix) {
					field, known = argKeys[prefix]
				}
			}
			if known && row.arg(field) != nil {
				return op, fmt.Errorf("world: Parse %q: field %q: %s takes its %s as %s=", s, f.key, op.Kind, opFieldNames[field], row.arg(field).key)
			}
			if known {
				return op, fmt.Errorf("world: Parse %q: field %q: %s", s, f.key, fieldNotFor(op.Kind, field))
			}
			return op, fmt.Errorf("world: Parse %q: field %q: unknown field", s, f.key)
		}
		given[a.field] = true
		if err := a.field.parse(&op, sub, *f.value); err != nil {
			return op, fmt.Errorf("world: Parse %q: field %q: %w", s, f.key, err)
		}
	}
	for _, a := range row.args {
		if a.required && !given[a.field] {
			return op, fmt.Errorf("world: Parse %q: %s needs field %s=", s, op.Kind, a.key)
		}
	}
	return op.validate()
}

// ParseResource reads a resource in the form Op.String writes it: version/resource for the core
// group ("v1/pods") or group/version/resource ("apps/v1/deployments").
func ParseResource(v string) (schema.GroupVersionResource, error) {
	parts := strings.Split(v, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}, nil
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("want version/resource or group/version/resource, got %q", v)
}

type textField struct {
	key   string
	value *string // nil for a bare word (the kind)
}

// splitFields splits s at spaces into key=value fields, reading Go-quoted values.
func splitFields(s string) ([]textField, error) {
	var out []textField
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, nil
		}
		end := strings.IndexAny(s, " =")
		if end < 0 || s[end] == ' ' {
			if end < 0 {
				end = len(s)
			}
			out = append(out, textField{key: s[:end]})
			s = s[end:]
			continue
		}
		key := s[:end]
		s = s[end+1:]
		var v string
		if strings.HasPrefix(s, "\"") {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("field %q: bad quoted value", key)
			}
			v, _ = strconv.Unquote(q)
			s = s[len(q):]
			if s != "" && s[0] != ' ' {
				return nil, fmt.Errorf("field %q: text after the quoted value", key)
			}
		} else {
			sp := strings.IndexByte(s, ' ')
			if sp < 0 {
				sp = len(s)
			}
			v, s = s[:sp], s[sp:]
		}
		out = append(out, textField{key: key, value: &v})
	}
}
