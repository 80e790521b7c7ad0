package world

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/informersim/informersim/fakeapi"
)

// OpKind is the kind of a workload operation.
type OpKind int

// The workload operations: writes (create, update, patch, delete), faults (close-watches,
// compact, fail-next) and time (sleep).
const (
	// OpCreate creates an object from the Op's metadata (Name or GenerateName, Labels,
	// Annotations, Finalizers) and Content.
	OpCreate OpKind = iota + 1
	// OpUpdate reads Name and writes it back with Labels and Annotations merged in, Finalizers
	// replacing its finalizers when not nil, each Content field replacing the object's, and its
	// "sim/gen" annotation bumped, so that every update is a real change with a new
	// resourceVersion.
	OpUpdate
	// OpPatch patches Name with Patch, of PatchType.
	OpPatch
	// OpDelete deletes Name. Finalizers or a pod's grace period make it a MODIFIED first
	// (fakeapi.md §5.3).
	OpDelete
	// OpCloseWatches ends every open watch: cleanly when Code is 0, else with an ERROR event of
	// that HTTP code (410 makes the Reflector relist, informer.md §7.7).
	OpCloseWatches
	// OpCompact compacts the apiserver's history to its current revision (fakeapi.md §6 F-1):
	// re-watching from an older resourceVersion then gets 410.
	OpCompact
	// OpFailNext makes the next request of Verb fail with HTTP Code (429, 500, 410...).
	OpFailNext
	// OpSleep only moves a Script's time forward by Duration.
	OpSleep
)

var opKindNames = [...]string{OpCreate: "create", OpUpdate: "update", OpPatch: "patch", OpDelete: "delete",
	OpCloseWatches: "close-watches", OpCompact: "compact", OpFailNext: "fail-next", OpSleep: "sleep"}

func (k OpKind) String() string {
	if k > 0 && int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return "OpKind(" + strconv.Itoa(int(k)) + ")"
}

func (k OpKind) write() bool { return k >= OpCreate && k <= OpDelete }

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
	// Name of the object. A create may leave it empty and give GenerateName instead.
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
	// Code is the HTTP code of OpCloseWatches (0: clean) and OpFailNext: an error code, 400 to
	// 599.
	Code int32
	// Verb is the request OpFailNext fails.
	Verb fakeapi.Verb
	// Duration is OpSleep's; it must not be negative.
	Duration time.Duration
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

// validateFields is validate but for the conversion of Content's values.
func (op Op) validateFields() error {
	errorCode := func(c int32) bool { return c >= 400 && c <= 599 }
	fail := func(format string, a ...any) error {
		return fmt.Errorf("world: op %s: "+format, append([]any{op.Kind}, a...)...)
	}
	if op.Kind < OpCreate || op.Kind > OpSleep {
		return fmt.Errorf("world: unknown op kind %v (want one of OpCreate to OpSleep: %s)", op.Kind, strings.Join(opKindNames[1:], ", "))
	}
	if !op.Kind.write() {
		if op.Name != "" || op.Namespace != "" || !op.Resource.Empty() || op.GenerateName != "" || len(op.Labels) > 0 ||
			len(op.Annotations) > 0 || op.Finalizers != nil || op.Content != nil {
			return fail("object fields (Resource, Namespace, Name, metadata, Content) are only for writes")
		}
	}
	switch {
	case op.Kind == OpPatch && (len(op.Labels) > 0 || len(op.Annotations) > 0 || op.Finalizers != nil || op.Content != nil):
		return fail("Labels, Annotations, Finalizers and Content are for create and update; a patch says its changes in Patch")
	case op.Kind == OpDelete && (op.Finalizers != nil || op.Content != nil):
		return fail("Finalizers and Content are for create and update; a delete only names its object")
	}
	if op.Kind != OpPatch && (op.PatchType != "" || op.Patch != "") {
		return fail("PatchType and Patch are only for patch")
	}
	if op.Kind != OpCreate && op.GenerateName != "" {
		return fail("GenerateName is only for create")
	}
	if op.Kind != OpCloseWatches && op.Kind != OpFailNext && op.Code != 0 {
		return fail("Code is only for close-watches and fail-next")
	}
	if op.Kind != OpFailNext && op.Verb != 0 {
		return fail("Verb is only for fail-next")
	}
	if op.Kind != OpSleep && op.Duration != 0 {
		return fail("Duration is only for sleep")
	}
	switch op.Kind {
	case OpCreate, OpUpdate, OpDelete:
	case OpPatch:
		if _, ok := patchNames[op.PatchType]; !ok {
			return fail("unknown PatchType %q", op.PatchType)
		}
		if op.Patch == "" {
			return fail("empty Patch")
		}
	case OpCompact:
	case OpCloseWatches:
		if op.Code != 0 && !errorCode(op.Code) {
			return fail("Code must be 0 (a clean close) or an HTTP error code, 400 to 599")
		}
	case OpFailNext:
		if op.Verb < fakeapi.VerbCreate || op.Verb > fakeapi.VerbWatch || !errorCode(op.Code) {
			return fail("needs a Verb (fakeapi.VerbCreate to VerbWatch) and an HTTP error Code, 400 to 599")
		}
	case OpSleep:
		if op.Duration < 0 {
			return fail("negative Duration")
		}
	default:
		return fmt.Errorf("world: unknown op kind %v", op.Kind)
	}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if _, ok := op.Content[k]; ok {
			return fail("Content must not hold %q: the op's other fields say it", k)
		}
	}
	return nil
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
//	sleep duration=1s
//
// Fields at their zero value are left out (the world's defaults then apply); labels and
// annotations print in key order; values with spaces, quotes or '=' are Go-quoted.
func (op Op) String() string {
	var b strings.Builder
	b.WriteString(op.Kind.String())
	field := func(k, v string) {
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(quoteValue(v))
	}
	if !op.Resource.Empty() {
		field("resource", formatGVR(op.Resource))
	}
	if op.Namespace != "" {
		field("ns", op.Namespace)
	}
	if op.Name != "" {
		field("name", op.Name)
	}
	if op.GenerateName != "" {
		field("generateName", op.GenerateName)
	}
	for _, m := range []struct {
		prefix string
		m      map[string]string
	}{{"label:", op.Labels}, {"annotation:", op.Annotations}} {
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		slices.Sort(keys) // never map order in output (style.md rule 9)
		for _, k := range keys {
			field(m.prefix+k, m.m[k])
		}
	}
	if op.Finalizers != nil {
		field("finalizers", strings.Join(op.Finalizers, ","))
	}
	if op.Content != nil {
		j, err := json.Marshal(op.Content) // map keys sorted by encoding/json
		if err != nil {
			j = []byte(fmt.Sprintf("%q", err.Error()))
		}
		field("content", string(j))
	}
	if op.PatchType != "" {
		pt, ok := patchNames[op.PatchType]
		if !ok {
			pt = string(op.PatchType)
		}
		field("patchType", pt)
	}
	if op.Patch != "" {
		field("patch", op.Patch)
	}
	if op.Verb != 0 {
		field("verb", op.Verb.String())
	}
	if op.Code != 0 {
		field("code", strconv.Itoa(int(op.Code)))
	}
	if op.Duration != 0 {
		field("duration", op.Duration.String())
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
	for k := OpCreate; k <= OpSleep; k++ {
		if k.String() == fields[0].key && fields[0].value == nil {
			op.Kind = k
		}
	}
	if op.Kind == 0 {
		return op, fmt.Errorf("world: Parse %q: unknown op kind %q", s, fields[0].key)
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		if f.value == nil {
			return op, fmt.Errorf("world: Parse %q: field %q has no value", s, f.key)
		}
		if seen[f.key] {
			return op, fmt.Errorf("world: Parse %q: field %q given twice", s, f.key)
		}
		seen[f.key] = true
		v := *f.value
		var err error
		switch k := f.key; {
		case k == "resource":
			op.Resource, err = ParseResource(v)
		case k == "ns":
			op.Namespace = v
		case k == "name":
			op.Name = v
		case k == "generateName":
			op.GenerateName = v
		case strings.HasPrefix(k, "label:"):
			if op.Labels == nil {
				op.Labels = map[string]string{}
			}
			op.Labels[strings.TrimPrefix(k, "label:")] = v
		case strings.HasPrefix(k, "annotation:"):
			if op.Annotations == nil {
				op.Annotations = map[string]string{}
			}
			op.Annotations[strings.TrimPrefix(k, "annotation:")] = v
		case k == "finalizers":
			op.Finalizers = []string{}
			if v != "" {
				op.Finalizers = strings.Split(v, ",")
			}
		case k == "content":
			op.Content = map[string]any{}
			// apimachinery's decoder keeps integers as int64, as unstructured objects hold them.
			err = utiljson.Unmarshal([]byte(v), &op.Content)
		case k == "patchType":
			op.PatchType = types.PatchType(v)
			for pt, name := range patchNames {
				if name == v {
					op.PatchType = pt
				}
			}
		case k == "patch":
			op.Patch = v
		case k == "verb":
			err = fmt.Errorf("unknown verb %q", v)
			for vb := fakeapi.VerbCreate; vb <= fakeapi.VerbWatch; vb++ {
				if vb.String() == v {
					op.Verb, err = vb, nil
				}
			}
		case k == "code":
			var c int64
			c, err = strconv.ParseInt(v, 10, 32)
			op.Code = int32(c)
		case k == "duration":
			op.Duration, err = time.ParseDuration(v)
		default:
			err = errors.New("unknown field")
		}
		if err != nil {
			return op, fmt.Errorf("world: Parse %q: field %q: %w", s, f.key, err)
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

type opField struct {
	key   string
	value *string // nil for a bare word (the kind)
}

// splitFields splits s at spaces into key=value fields, reading Go-quoted values.
func splitFields(s string) ([]opField, error) {
	var out []opField
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
			out = append(out, opField{key: s[:end]})
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
		out = append(out, opField{key: key, value: &v})
	}
}
