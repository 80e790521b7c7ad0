package fakeapi

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// generateNameAlphabet is the apiserver's suffix alphabet: no vowels, no confusable characters
// (fakeapi.md §5.1).
const generateNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

const generateNameSuffixLen = 5

var errModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// normalize deep-copies a JSON-like value into the types unstructured objects use (string, bool,
// int64, float64, nil, map[string]any, []any), rejecting anything else, so stored objects are
// private to the server and safe to DeepCopy.
func normalize(v any, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("object nested deeper than 64 levels")
	}
	switch x := v.(type) {
	case nil, string, bool, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		if uint64(x) > 1<<63-1 {
			return nil, fmt.Errorf("integer %d overflows int64", x)
		}
		return int64(x), nil
	case uint64:
		if x > 1<<63-1 {
			return nil, fmt.Errorf("integer %d overflows int64", x)
		}
		return int64(x), nil
	case float32:
		return float64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("invalid number %q", x)
		}
		return f, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = n
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = n
		}
		return l, nil
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m, nil
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return l, nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// normalizeObject is normalize for a whole object that may replace the stored object old (nil
// for none): a map or list that equals the value old holds at the same place, either a
// top-level field or a field of metadata, is shared with old instead of copied (stored values
// are immutable; see "Ownership of objects" in the package documentation). The top-level map
// and the metadata map are always new, since a write sets fields in them. The result and its
// errors are those of normalize(obj, 0).
func normalizeObject(obj, old map[string]any) (map[string]any, error) {
	if old == nil {
		m, err := normalize(obj, 0)
		if err != nil {
			return nil, err
		}
		return m.(map[string]any), nil
	}
	oldMD, _ := old["metadata"].(map[string]any)
	top := make(map[string]any, len(obj))
	for k, v := range obj {
		var n any
		var err error
		if md, ok := v.(map[string]any); ok && k == "metadata" {
			m := make(map[string]any, len(md))
			for mk, mv := range md {
				var o any
				if isComposite(mv) { // only maps and lists are shared: no lookup for the others
					o = oldMD[mk]
				}
				if m[mk], err = normalizeShared(mv, o, 2); err != nil {
					return nil, err
				}
			}
			n = m
		} else {
			var o any
			if isComposite(v) { // as for metadata: no lookup for scalars
				o = old[k]
			}
			if n, err = normalizeShared(v, o, 1); err != nil {
				return nil, err
			}
		}
		top[k] = n
	}
	return top, nil
}

// normalizeShared is normalize(v, depth), except that it returns old when old is a map or list
// equal to v: v then holds only normalised types, so normalize would have built a copy of old.
// A scalar v (the common case) is returned as normalize returns it, without a comparison.
func normalizeShared(v, old any, depth int) (any, error) {
	if isComposite(v) && isComposite(old) && reflect.DeepEqual(v, old) {
		return old, nil
	}
	return normalize(v, depth)
}

// adoptObject is normalizeObject for an object handed over to the server (Mutation.HandOver,
// ResourceClient.CreateHandedOver): nobody else holds any of its maps and lists, so they become
// the stored object's own, checked and converted in place, instead of being copied. The result
// is obj itself (or a copy, see below), holding exactly what normalizeObject(obj, old) returns: the same values, the
// same ones shared with old (a map or list equal to old's at the same place becomes old's), and
// the same errors. Only what normalize would build anew is replaced: a value of another type
// than the normalised ones (an int, a map[string]string), and a nil map or list (normalize makes
// it empty, which JSON encodes as {} or [], not null). obj's top-level and metadata maps are
// written by the write in progress, so they must not be old's: obj being old is copied as
// normalizeObject copies it, a metadata map that is old's is replaced by a copy.
func adoptObject(obj, old map[string]any) (map[string]any, error) {
	if sameComposite(obj, old) {
		return normalizeObject(obj, old)
	}
	if err := adoptEntries(obj, old, 1, true); err != nil {
		return nil, err
	}
	return obj, nil
}

// replacement is a value adoptEntries puts into a map once it has walked the map.
type replacement struct {
	key   string
	value any
}

// adoptEntries checks and converts in place the values of m, found at depth-1 (their depth is
// depth, as in normalize): each of m's maps and lists is walked, and a value normalize would
// build anew is replaced. share, when not nil, holds the stored values m's may be replaced by
// (normalizeShared): a top-level map's are old's, metadata's are old's metadata's. top says m is
// the object's top-level map, whose metadata is walked against old's metadata. m is written only
// once it has been walked (a map must not be written while it is iterated), through setField.
func adoptEntries(m, share map[string]any, depth int, top bool) error {
	var room [4]replacement // most maps need no replacement: none allocated for a few
	repl := room[:0]
	for k, v := range m {
		var o any
		if share != nil && isComposite(v) { // as normalizeObject: no lookup for scalars
			o = share[k]
		}
		if md, isMap := v.(map[string]any); top && isMap && k == "metadata" {
			oldMD, _ := o.(map[string]any)
			switch {
			case md == nil:
				md = map[string]any{}
				repl = append(repl, replacement{k, md})
			case sameComposite(md, oldMD):
				md = maps.Clone(md) // the write sets metadata fields: never into old's
				repl = append(repl, replacement{k, md})
			}
			if err := adoptEntries(md, oldMD, depth+1, false); err != nil {
				return err
			}
			continue
		}
		if isComposite(v) && isComposite(o) && reflect.DeepEqual(v, o) {
			if !sameComposite(v, o) {
				repl = append(repl, replacement{k, o})
			}
			continue
		}
		n, replaced, err := adoptValue(v, depth)
		if err != nil {
			return err
		}
		if replaced {
			repl = append(repl, replacement{k, n})
		}
	}
	for _, r := range repl {
		setField(m, r.key, r.value)
	}
	return nil
}

// adoptValue checks v, a value handed over at depth, as normalize(v, depth) would check it: v
// itself, with its maps and lists converted in place, or, with replaced set, the new value
// normalize builds for it (see adoptObject).
func adoptValue(v any, depth int) (n any, replaced bool, err error) {
	if depth > 64 {
		return nil, false, fmt.Errorf("object nested deeper than 64 levels")
	}
	switch x := v.(type) {
	case nil, string, bool, int64, float64:
		return v, false, nil
	case map[string]any:
		if x == nil {
			return map[string]any{}, true, nil
		}
		return v, false, adoptEntries(x, nil, depth+1, false)
	case []any:
		if x == nil {
			return []any{}, true, nil
		}
		for i, e := range x {
			n, replaced, err := adoptValue(e, depth+1)
			if err != nil {
				return nil, false, err
			}
			if replaced {
				x[i] = n
			}
		}
		return v, false, nil
	}
	n, err = normalize(v, depth) // another type: normalize converts it, or says what is wrong
	return n, err == nil, err
}

// input validates and copies a caller's object for a write: JSON-like content, the resource's
// apiVersion and kind (filled in when empty), and the namespace of the request path. old, if
// not nil, is a stored object the write may replace: equal parts are shared with it
// (normalizeObject), so the result must not leave the package without DeepCopy. An object
// handedOver (Mutation.HandOver, CreateHandedOver) is not copied but adopted (adoptObject): the
// result holds obj's maps.
func (s *Server) input(res *resourceStore, ns string, obj, old *unstructured.Unstructured, handedOver bool) (*unstructured.Unstructured, error) {
	if obj == nil || obj.Object == nil {
		return nil, apierrors.NewBadRequest("fakeapi: no object in the request body")
	}
	var oldMap map[string]any
	if old != nil {
		oldMap = old.Object
	}
	var m map[string]any
	var err error
	if handedOver {
		m, err = adoptObject(obj.Object, oldMap)
	} else {
		m, err = normalizeObject(obj.Object, oldMap)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fakeapi: invalid object: %v", err))
	}
	u := &unstructured.Unstructured{Object: m} // the server's own, even around adopted maps
	if _, ok := u.Object["metadata"]; ok {
		if _, isMap := u.Object["metadata"].(map[string]any); !isMap {
			return nil, apierrors.NewBadRequest("fakeapi: metadata must be an object")
		}
	}
	gv := res.info.GVR.GroupVersion()
	av, _ := u.Object["apiVersion"].(string)
	kind, _ := u.Object["kind"].(string)
	switch {
	case av == "":
		setField(u.Object, "apiVersion", gv.String())
	case !isAPIVersion(av, gv):
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", av, gv.String()))
	}
	switch {
	case kind == "":
		setField(u.Object, "kind", res.info.Kind)
	case kind != res.info.Kind:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", kind, res.info.Kind))
	}
	if !res.info.Namespaced {
		removeMeta(u, "namespace")
		return u, nil
	}
	objNS := u.GetNamespace()
	switch {
	case ns == "" && objNS == "":
		return nil, apierrors.NewBadRequest("the namespace of the object must be set for a namespaced resource")
	case ns != "" && objNS != "" && ns != objNS:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	case objNS == "":
		setMeta(u, "namespace", ns)
	}
	return u, nil
}

// isAPIVersion reports whether av is gv.String() without building that string: the version for
// the legacy core group, group/version for any other.
func isAPIVersion(av string, gv schema.GroupVersion) bool {
	if gv.Group == "" {
		return av == gv.Version
	}
	return len(av) == len(gv.Group)+1+len(gv.Version) && av[len(gv.Group)] == '/' &&
		av[:len(gv.Group)] == gv.Group && av[len(gv.Group)+1:] == gv.Version
}

func metaString(u *unstructured.Unstructured, field string) (string, error) {
	md, _ := u.Object["metadata"].(map[string]any)
	v, ok := md[field]
	if !ok || v == nil {
		return "", nil
	}
	str, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("metadata.%s must be a string", field)
	}
	return str, nil
}

// metadataPath is the field path of metadata; paths are never changed, only extended.
var metadataPath = field.NewPath("metadata")

// validateMeta checks the metadata fields fakeapi models (fakeapi.md §5.1): names, labels,
// annotations and finalizers, with field paths as the apiserver's ObjectMeta validation has them.
// stored, when not nil, is a stored object u's values may be shared with (input's sharing): a
// label, annotation or finalizer list that is the very one stored holds passed this check when
// it was committed (every write that commits user values validates them first) and cannot have
// changed since (stored values are immutable), so it is not walked again.
func validateMeta(res *resourceStore, u, stored *unstructured.Unstructured) field.ErrorList {
	md0, _ := u.Object["metadata"].(map[string]any)
	var storedMD map[string]any
	if stored != nil {
		storedMD, _ = stored.Object["metadata"].(map[string]any)
	}
	if errs := metaTypeErrors(md0, storedMD); len(errs) > 0 {
		return errs // the accessors of metaValueErrors assume well-typed metadata
	}
	errs := metaValueErrors(res, md0, storedMD)
	// Map iteration in metaValueErrors: sort the messages so the error text is deterministic
	// (style rule 9).
	sortFieldErrors(errs)
	return errs
}

// sharedWithStored reports whether metadata field f of md0 is the stored metadata's own value,
// validated when it was committed (validateMeta).
func sharedWithStored(md0, storedMD map[string]any, f string) bool {
	v, ok := storedMD[f]
	return ok && sameComposite(md0[f], v)
}

// metaTypeErrors checks the types of the metadata fields validateMeta reads: the string fields,
// labels and annotations as maps of strings, finalizers as a list of qualified names. Values
// shared with storedMD are not walked.
func metaTypeErrors(md0, storedMD map[string]any) field.ErrorList {
	var errs field.ErrorList
	md := metadataPath
	for _, f := range []string{"name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"} {
		if v := md0[f]; v != nil { // as metaString: absent or null is an empty string
			if _, isString := v.(string); !isString {
				errs = append(errs, field.Invalid(md.Child(f), v, "must be a string"))
			}
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		if m, ok := md0[f]; ok && m != nil && !sharedWithStored(md0, storedMD, f) {
			mm, isMap := m.(map[string]any)
			if !isMap {
				errs = append(errs, field.Invalid(md.Child(f), m, "must be a map of strings"))
				continue
			}
			for k, v := range mm {
				if _, ok := v.(string); !ok {
					errs = append(errs, field.Invalid(md.Child(f).Key(k), v, "must be a string"))
				}
			}
		}
	}
	if f, ok := md0["finalizers"]; ok && f != nil && !sharedWithStored(md0, storedMD, "finalizers") {
		l, isList := f.([]any)
		if !isList {
			errs = append(errs, field.Invalid(md.Child("finalizers"), f, "must be a list of strings"))
		}
		for i, e := range l {
			str, ok := e.(string)
			if !ok {
				errs = append(errs, field.Invalid(md.Child("finalizers").Index(i), e, "must be a string"))
				continue
			}
			if isSimpleLabelKey(str) {
				continue
			}
			for _, msg := range validation.IsQualifiedName(str) {
				errs = append(errs, field.Invalid(md.Child("finalizers").Index(i), str, msg))
			}
		}
	}
	return errs
}

// metaValueErrors checks the values of well-typed metadata: the name by the resource's naming
// rule, the namespace, label keys and values, annotation keys. Labels and annotations shared with
// storedMD are not walked.
func metaValueErrors(res *resourceStore, md0, storedMD map[string]any) field.ErrorList {
	var errs field.ErrorList
	md := metadataPath
	// Each check below asks apimachinery's validator only when the fast check of names.go
	// cannot accept the value at once, so valid objects are validated without regexps.
	if name, _ := md0["name"].(string); name != "" {
		var msgs []string
		switch res.info.Names {
		case NameLabel:
			if !isDNS1123Label(name) {
				msgs = validation.IsDNS1123Label(name)
			}
		case NameLabel1035:
			if !isDNS1035Label(name) {
				msgs = validation.IsDNS1035Label(name)
			}
		default:
			if !isDNS1123Subdomain(name) {
				msgs = validation.IsDNS1123Subdomain(name)
			}
		}
		for _, m := range msgs {
			errs = append(errs, field.Invalid(md.Child("name"), name, m))
		}
	}
	if ns, _ := md0["namespace"].(string); ns != "" && !isDNS1123Label(ns) {
		for _, m := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(md.Child("namespace"), ns, m))
		}
	}
	// labels and annotations hold only strings here (checked above).
	var labels, annotations map[string]any
	if !sharedWithStored(md0, storedMD, "labels") {
		labels, _ = md0["labels"].(map[string]any)
	}
	for k, v := range labels {
		if !isSimpleLabelKey(k) {
			for _, m := range validation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(md.Child("labels"), k, m))
			}
		}
		if v := v.(string); !isLabelValue(v) {
			for _, m := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(md.Child("labels"), v, m))
			}
		}
	}
	if !sharedWithStored(md0, storedMD, "annotations") {
		annotations, _ = md0["annotations"].(map[string]any)
	}
	for k := range annotations {
		if !isSimpleLabelKey(k) {
			for _, m := range validation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(md.Child("annotations"), k, m))
			}
		}
	}
	return errs
}

// sortFieldErrors sorts errs by field, then by bad value as text, keeping the order of equal ones.
func sortFieldErrors(errs field.ErrorList) {
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		if a.Field != b.Field {
			if a.Field < b.Field {
				return -1
			}
			return 1
		}
		as, bs := fmt.Sprint(a.BadValue), fmt.Sprint(b.BadValue)
		switch {
		case as < bs:
			return -1
		case as > bs:
			return 1
		}
		return 0
	})
}

func (s *Server) invalid(res *resourceStore, name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: res.info.GVR.Group, Kind: res.info.Kind}, name, errs)
}

// newUID_locked draws a version-4 UUID from the injected source (MH-13).
func (s *Server) newUID_locked() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], s.rnd.Uint64())
	binary.BigEndian.PutUint64(b[8:], s.rnd.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// now_locked returns the clock's time as a timestamp (RFC 3339 in UTC, whole seconds). The text
// depends only on the second, so the last one is kept: a simulation makes many objects within
// one second of its clock.
func (s *Server) now_locked() string {
	t := s.clk.Now().UTC()
	if sec := t.Unix(); s.nowText == "" || sec != s.nowSec {
		s.nowSec, s.nowText = sec, t.Format(time.RFC3339)
	}
	return s.nowText
}

// create_locked implements POST (fakeapi.md §5.1). Like every *_locked write, it returns the
// written object as the server holds it (stored, or private and sharing with what is stored):
// what is handed out is copyObject of it (see "Ownership of objects").
// handedOver says obj is handed over to the server (ResourceClient.CreateHandedOver): it is
// adopted, not copied (input).
func (s *Server) create_locked(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured, opts metav1.CreateOptions, subresources []string, handedOver bool) (*unstructured.Unstructured, error) {
	res, ok := s.lookup_locked(gvr)
	if !ok || len(subresources) > 0 {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	if err := s.takeFailure_locked(VerbCreate, gvr); err != nil {
		return nil, err
	}
	return s.insert_locked(res, ns, obj, opts, handedOver)
}

// insert_locked is create_locked once the resource is known and the injected failures were
// taken: [ResourceClient.Mutate] creates through it under the failures of its own verb.
func (s *Server) insert_locked(res *resourceStore, ns string, obj *unstructured.Unstructured, opts metav1.CreateOptions, handedOver bool) (*unstructured.Unstructured, error) {
	gvr := res.info.GVR
	u, err := s.input(res, ns, obj, nil, handedOver)
	if err != nil {
		return nil, err
	}
	if err := s.admitWrite_locked(res, u, true); err != nil {
		return nil, err
	}
	if errs := validateMeta(res, u, nil); len(errs) > 0 {
		return nil, s.invalid(res, u.GetName(), errs)
	}
	if u.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	gr := gvr.GroupResource()
	name, gen := u.GetName(), u.GetGenerateName()
	if name == "" && gen == "" {
		return nil, s.invalid(res, "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if name == "" {
		// RetryGenerateName: up to GenerateNameAttempts names, then 409 with retry-after 1.
		prefix := gen
		if max := validation.DNS1123SubdomainMaxLength - generateNameSuffixLen; len(prefix) > max {
			prefix = prefix[:max]
		}
		for attempt := 0; attempt < s.cfg.GenerateNameAttempts; attempt++ {
			b := make([]byte, generateNameSuffixLen)
			for i := range b {
				b[i] = generateNameAlphabet[s.rnd.IntN(len(generateNameAlphabet))]
			}
			name = prefix + string(b)
			if s.current_locked(res, objKey{u.GetNamespace(), name}) == nil {
				break
			}
			if attempt == s.cfg.GenerateNameAttempts-1 {
				return nil, apierrors.NewGenerateNameConflict(gr, name, 1)
			}
		}
		setMeta(u, "name", name)
		if errs := validateMeta(res, u, nil); len(errs) > 0 {
			return nil, s.invalid(res, name, errs)
		}
	}
	key := objKey{u.GetNamespace(), name}
	// A Service's cluster IPs are allocated before the object is stored, as kube-apiserver's
	// registry allocates them before its storage's create (serviceips.go).
	if err := s.serviceIPs_locked(res, key, u, nil, len(opts.DryRun) > 0); err != nil {
		return nil, err
	}
	if s.current_locked(res, key) != nil {
		return nil, apierrors.NewAlreadyExists(gr, name)
	}
	if s.objects >= s.cfg.MaxObjects {
		return nil, apierrors.NewTooManyRequests(fmt.Sprintf("fakeapi: object limit %d reached", s.cfg.MaxObjects), 1)
	}
	setMeta(u, "uid", s.newUID_locked())
	setMeta(u, "creationTimestamp", s.now_locked())
	removeMeta(u, "deletionTimestamp")
	removeMeta(u, "deletionGracePeriodSeconds")
	if res.info.Generation {
		setMeta(u, "generation", int64(1))
	} else {
		removeMeta(u, "generation")
	}
	if len(opts.DryRun) > 0 {
		return u, nil
	}
	return s.commit_locked(res, key, watch.Added, u, nil), nil
}

// live_locked returns the current version of key, or nil, for a write that acts on it: if it
// was lent, its fingerprint is checked first (lend.go), so that a change made to it does not
// pass into the versions built from it.
func (s *Server) live_locked(res *resourceStore, key objKey) *unstructured.Unstructured {
	obj := s.current_locked(res, key)
	s.checkLent_locked(obj, "a write to it")
	return obj
}

// current_locked returns the current version of key, or nil, unchecked: for reads that only
// hand out a copy or test existence.
func (s *Server) current_locked(res *resourceStore, key objKey) *unstructured.Unstructured {
	if h := res.keys[key]; h != nil {
		return h.latest()
	}
	return nil
}

// update_locked implements PUT and PUT /status (fakeapi.md §5.2, §5.5).
func (s *Server) update_locked(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured, status bool, dryRun bool) (*unstructured.Unstructured, error) {
	res, ok := s.lookup_locked(gvr)
	if !ok || (status && !res.info.Status) {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	verb := VerbUpdate
	if status {
		verb = VerbUpdateStatus
	}
	if err := s.takeFailure_locked(verb, gvr); err != nil {
		return nil, err
	}
	replaced := s.replaced_locked(res, ns, obj)
	u, err := s.input(res, ns, obj, replaced, false)
	if err != nil {
		return nil, err
	}
	if errs := validateMeta(res, u, replaced); len(errs) > 0 {
		return nil, s.invalid(res, metaStr(u, "name"), errs)
	}
	gr := gvr.GroupResource()
	name := metaStr(u, "name")
	if name == "" {
		return nil, apierrors.NewBadRequest("name is required for an update")
	}
	key := objKey{metaStr(u, "namespace"), name}
	cur := s.live_locked(res, key)
	if cur == nil {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return s.applyUpdate_locked(res, key, cur, u, replaced == cur, status, dryRun)
}

// replaced_locked guesses, from the raw request, the stored object an update of obj replaces,
// so input can share equal parts with it. Any stored object would be correct (only equal values
// are shared); the right one saves the most copying. nil when there is none.
func (s *Server) replaced_locked(res *resourceStore, ns string, obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil || obj.Object == nil {
		return nil
	}
	name, err := metaString(obj, "name")
	if err != nil || name == "" {
		return nil
	}
	if objNS, err := metaString(obj, "namespace"); err == nil && objNS != "" {
		ns = objNS
	}
	if !res.info.Namespaced {
		ns = ""
	}
	return s.current_locked(res, objKey{ns, name}) // the update checks it (live_locked)
}

// applyUpdate_locked replaces the stored cur by the validated input u (PUT, PUT /status and
// patches). sharesCur says that input built u sharing with cur itself, so that every value of u
// equal to one of cur's already is cur's (normalizeObject) and shareUnchanged has nothing left
// to do.
func (s *Server) applyUpdate_locked(res *resourceStore, key objKey, cur, u *unstructured.Unstructured, sharesCur, status, dryRun bool) (*unstructured.Unstructured, error) {
	return s.applyUpdateManaged_locked(res, key, cur, u, sharesCur, status, dryRun, false)
}

// applyUpdateManaged_locked is applyUpdate_locked; with keepManaged, a status write also takes
// u's metadata.managedFields, which a field manager computed for it ([Mutation]): the one
// metadata field a /status write changes in kube-apiserver too.
func (s *Server) applyUpdateManaged_locked(res *resourceStore, key objKey, cur, u *unstructured.Unstructured, sharesCur, status, dryRun, keepManaged bool) (*unstructured.Unstructured, error) {
	// Admission sees an update once the object was read, before its preconditions.
	if err := s.admitWrite_locked(res, cur, false); err != nil {
		return nil, err
	}
	if err := updatePreconditions(res, key.name, cur, u); err != nil {
		return nil, err
	}
	var next *unstructured.Unstructured
	if status {
		next = statusWriteNext(cur, u, keepManaged)
	} else {
		var err error
		if next, err = s.objectWriteNext(res, key.name, cur, u); err != nil {
			return nil, err
		}
		if err := s.serviceIPs_locked(res, key, next, cur, dryRun); err != nil {
			return nil, err
		}
	}
	if _, ok := metaValue(cur, "resourceVersion").(string); ok {
		copyMeta(next, cur, "resourceVersion")
	} else {
		setMetaString(next, "resourceVersion", metaStr(cur, "resourceVersion"))
	}
	if reflect.DeepEqual(next.Object, cur.Object) {
		// No-op: no revision, no event, the stored object back (§2 "No-op writes", MH-11).
		return cur, nil
	}
	// next shares values with cur (withOwnMeta for a status write, input's sharing otherwise):
	// like cur, it leaves the package only as a copy.
	if dryRun {
		return next, nil
	}
	if deleteDuringUpdate(res, cur, next) {
		// The update empties the finalizers of a terminating object (§5.2): it is never stored;
		// the stored object is deleted instead, so DELETED carries the stored state (MH-10), and
		// the caller gets back the object it sent, as the registry's deleteWithoutFinalizers does.
		s.commit_locked(res, key, watch.Deleted, nil, cur)
		return next, nil
	}
	if !sharesCur {
		shareUnchanged(next, cur)
	}
	return s.commit_locked(res, key, watch.Modified, next, cur), nil
}

// updatePreconditions checks an update's resourceVersion (required where the resource requires
// it, well-formed, the stored one's) and uid (the stored one's if set), with kube-apiserver's
// errors.
func updatePreconditions(res *resourceStore, name string, cur, u *unstructured.Unstructured) error {
	gr := res.info.GVR.GroupResource()
	switch rv := metaStr(u, "resourceVersion"); {
	case rv == "" && res.info.RequireResourceVersion:
		// The registry's Update qualifies this one by resource, not kind, and reports the parsed
		// RV (a uint64 zero).
		qualified := schema.GroupKind{Group: gr.Group, Kind: gr.Resource}
		return apierrors.NewInvalid(qualified, name, field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update")})
	case rv != "":
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv))
		}
		if rv != metaStr(cur, "resourceVersion") {
			return apierrors.NewConflict(gr, name, errModified)
		}
	}
	if uid := metaStr(u, "uid"); uid != "" && uid != metaStr(cur, "uid") {
		return apierrors.NewConflict(gr, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.GetUID()))
	}
	return nil
}

// statusWriteNext is the object a /status write of u makes of cur: cur with u's status (and u's
// managedFields when keepManaged).
func statusWriteNext(cur, u *unstructured.Unstructured, keepManaged bool) *unstructured.Unstructured {
	// /status changes only .status (§5.5). next shares all but its top-level and metadata
	// maps with the stored cur (copy on write), so it must not leave the package as is.
	next := withOwnMeta(cur)
	if st, ok := u.Object["status"]; ok {
		setField(next.Object, "status", st)
	} else {
		delete(next.Object, "status")
	}
	if keepManaged {
		if mf := metaValue(u, "managedFields"); mf != nil {
			setMeta(next, "managedFields", mf)
		} else {
			removeMeta(next, "managedFields")
		}
	}
	return next
}

// objectWriteNext is the object an update of cur to u makes: u with cur's status where the
// resource has a status subresource, and the server's system fields; a change to deletionTimestamp
// or a finalizer added to a terminating object is refused.
func (s *Server) objectWriteNext(res *resourceStore, name string, cur, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	next := u
	if res.info.Status {
		if st, ok := cur.Object["status"]; ok {
			setField(next.Object, "status", st)
		} else {
			delete(next.Object, "status")
		}
	}
	// System fields are the server's (apiserver rest.BeforeUpdate): an empty uid takes the
	// stored one, timestamps and generation cannot be changed by an update.
	var errs field.ErrorList
	md := metadataPath
	if dt, _ := metaString(u, "deletionTimestamp"); dt != "" && !terminating(cur) {
		errs = append(errs, field.Invalid(md.Child("deletionTimestamp"), dt, "field is immutable; may only be changed via deletion"))
	}
	if terminating(cur) {
		// §5.2: no new finalizers once deletionTimestamp is set.
		var added []string
		for _, f := range next.GetFinalizers() {
			if !slices.Contains(cur.GetFinalizers(), f) {
				added = append(added, f)
			}
		}
		if len(added) > 0 {
			errs = append(errs, field.Forbidden(md.Child("finalizers"), fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", added)))
		}
	}
	if len(errs) > 0 {
		return nil, s.invalid(res, name, errs)
	}
	if _, ok := metaValue(cur, "uid").(string); ok {
		copyMeta(next, cur, "uid") // the stored value itself: nothing to allocate
	} else {
		setMetaString(next, "uid", string(cur.GetUID()))
	}
	copyMeta(next, cur, "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")
	if res.info.Generation && !specEqual(next, cur) {
		setGeneration(next, cur.GetGeneration()+1)
	}
	return next, nil
}

// deleteDuringUpdate is the registry's ShouldDeleteDuringUpdate: an update that leaves no
// finalizers deletes an object whose deletion was requested, once no grace period remains.
// A namespace also waits for its spec.finalizers (the namespace registry's
// ShouldDeleteNamespaceDuringUpdate).
func deleteDuringUpdate(res *resourceStore, cur, next *unstructured.Unstructured) bool {
	if len(next.GetFinalizers()) > 0 || !terminating(cur) {
		return false
	}
	if isNamespaces(res) && len(NamespaceSpecFinalizers(next)) > 0 {
		return false
	}
	g := cur.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}

// terminating reports whether u's deletionTimestamp is set, as GetDeletionTimestamp() != nil
// does, without parsing (and allocating) when the field is absent or empty.
func terminating(u *unstructured.Unstructured) bool {
	if s, _ := metaValue(u, "deletionTimestamp").(string); s == "" {
		return false
	}
	return u.GetDeletionTimestamp() != nil
}

// metaValue returns metadata.<field> of u as stored, or nil.
func metaValue(u *unstructured.Unstructured, field string) any {
	md, _ := u.Object["metadata"].(map[string]any)
	return md[field]
}

// metaStr returns metadata.<field> of u when it is a string and "" otherwise, as the
// unstructured getters (GetName, GetResourceVersion, GetUID) do, with two map lookups instead of
// their walk of a field path: the write path reads these fields several times per write.
func metaStr(u *unstructured.Unstructured, field string) string {
	s, _ := metaValue(u, field).(string)
	return s
}

// delete_locked implements DELETE (fakeapi.md §5.3). As create_locked, it returns the server's
// object: Delete and DeleteCollection only read its resourceVersion and name, so a delete costs
// no copy of the object; DeleteResult copies it.
func (s *Server) delete_locked(res *resourceStore, key objKey, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	gr := res.info.GVR.GroupResource()
	cur := s.live_locked(res, key)
	if cur == nil {
		return nil, apierrors.NewNotFound(gr, key.name)
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != cur.GetUID() {
			return nil, apierrors.NewConflict(gr, key.name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, cur.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != cur.GetResourceVersion() {
			return nil, apierrors.NewConflict(gr, key.name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, cur.GetResourceVersion()))
		}
	}
	if err := validateDeleteOptions(opts); err != nil {
		return nil, err
	}
	if isNamespaces(res) {
		if err := admitNamespaceDelete(gr, key.name); err != nil {
			return nil, err
		}
	}
	if len(opts.DryRun) > 0 {
		return cur, nil
	}
	finalizers := gcFinalizers(cur.GetFinalizers(), opts, res.info.OrphanByDefault)
	if cur.GetDeletionTimestamp() == nil {
		for _, f := range res.info.DeleteFinalizers {
			if !slices.Contains(finalizers, f) {
				finalizers = append(finalizers, f)
			}
		}
	}
	if isNamespaces(res) {
		return s.deleteNamespace_locked(res, key, cur, finalizers)
	}
	if res.info.GracefulDelete {
		return s.gracefulDelete_locked(res, key, cur, finalizers, opts.GracePeriodSeconds)
	}
	if cur.GetDeletionTimestamp() != nil {
		// Already terminating: marking it again changes nothing; the finalizers decide.
		return cur, nil
	}
	if len(finalizers) == 0 {
		return s.commit_locked(res, key, watch.Deleted, nil, cur), nil
	}
	// Finalizers pending: mark as deleting now, with grace 0 (registry markAsDeleting). Only
	// direct metadata fields change, so next may share the rest with cur (copy on write).
	next := withOwnMeta(cur)
	setFinalizers(next, finalizers)
	s.markDeleting(next, 0)
	return s.commit_locked(res, key, watch.Modified, next, cur), nil
}

// markDeleting sets deletionTimestamp to now plus grace and deletionGracePeriodSeconds to grace,
// bumping a tracked generation, as rest.BeforeDelete does on the first delete.
func (s *Server) markDeleting(u *unstructured.Unstructured, grace int64) {
	s.setDeletion(u, s.clk.Now().Add(time.Duration(grace)*time.Second), grace)
	if g := u.GetGeneration(); g > 0 {
		setGeneration(u, g+1)
	}
}

func (s *Server) setDeletion(u *unstructured.Unstructured, at time.Time, grace int64) {
	setMeta(u, "deletionTimestamp", at.UTC().Format(time.RFC3339))
	setMeta(u, "deletionGracePeriodSeconds", grace)
}

// gracefulDelete_locked is DELETE for kinds with graceful deletion (pods), following
// rest.BeforeDelete, the pod strategy's CheckGracefulDelete and the registry's Delete
// (fakeapi.md §5.3): the deletion fields are always stored first (one MODIFIED), and the object
// is removed (DELETED, carrying that state) only when the grace period is 0 and no finalizer
// remains. On a terminating object a delete may only shorten the grace period.
func (s *Server) gracefulDelete_locked(res *resourceStore, key objKey, cur *unstructured.Unstructured, finalizers []string, requested *int64) (*unstructured.Unstructured, error) {
	if requested != nil && *requested < 0 {
		requested = ptrTo(int64(1)) // negative grace periods count as 1 s
	}
	// next, the state to store, changes only direct metadata fields of cur: it shares the rest
	// with cur (copy on write).
	var next *unstructured.Unstructured
	if ts := cur.GetDeletionTimestamp(); ts != nil {
		g := cur.GetDeletionGracePeriodSeconds()
		if g == nil || *g == 0 {
			// Terminating with no grace left: delete unless finalizers remain (recovery path).
			if len(cur.GetFinalizers()) > 0 {
				return cur, nil
			}
			return s.commit_locked(res, key, watch.Deleted, nil, cur), nil
		}
		if requested == nil || *requested >= *g {
			return cur, nil // graceful deletion already pending
		}
		period := *requested
		at := ts.Add(time.Duration(period-*g) * time.Second)
		if now := s.clk.Now(); at.Before(now) {
			at = now
			if period != 0 {
				period = 1 // still graceful: another actor makes the final grace-0 delete
			}
		}
		next = withOwnMeta(cur)
		s.setDeletion(next, at, period)
	} else {
		// Every first delete stores the deletion fields, even with grace 0 (an unscheduled or
		// terminated pod): rest.BeforeDelete updates the object before the registry deletes it.
		next = withOwnMeta(cur)
		setFinalizers(next, finalizers)
		s.markDeleting(next, podGracePeriod(cur, requested))
	}
	mod := s.commit_locked(res, key, watch.Modified, next, cur)
	if g := next.GetDeletionGracePeriodSeconds(); len(next.GetFinalizers()) > 0 || *g > 0 {
		return mod, nil
	}
	return s.commit_locked(res, key, watch.Deleted, nil, mod), nil
}

// podGracePeriod is the pod strategy's CheckGracefulDelete: the requested grace, else the pod's
// terminationGracePeriodSeconds (defaulted to 30 by the API), and 0 for a pod that is not
// scheduled or has already terminated.
func podGracePeriod(pod *unstructured.Unstructured, requested *int64) int64 {
	period := int64(30)
	if requested != nil {
		period = *requested
	} else if g, ok, _ := unstructured.NestedInt64(pod.Object, "spec", "terminationGracePeriodSeconds"); ok {
		period = g
	}
	if node, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName"); node == "" {
		period = 0
	}
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase == "Failed" || phase == "Succeeded" {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

func ptrTo[T any](v T) *T { return &v }

func appendMissing(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(slices.Clone(xs), x)
}
