package kube

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/informersim/informersim/fakeapi/rest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
)

// ProtobufMediaType is kube-apiserver's protobuf media type; ProtobufStreamMediaType the
// Content-Type of its protobuf watch streams.
const (
	ProtobufMediaType       = runtime.ContentTypeProtobuf
	ProtobufStreamMediaType = runtime.ContentTypeProtobuf + ";stream=watch"
)

// ProtobufCodec is the rest.Codec of application/vnd.kubernetes.protobuf: the protobuf
// marshalling k8s.io/api generates for the built-in kinds, in apimachinery's envelope (the "k8s"
// magic, then a runtime.Unknown carrying the type), and watch streams as kube-apiserver writes
// them: each event a metav1.WatchEvent without the envelope, preceded by its length as four
// big-endian bytes, its object enveloped inside. It knows every kind of client-go's scheme (the
// built-in API) and the meta.k8s.io kinds; custom resources have no protobuf form. Objects move
// between the front's JSON form and the Go types through the scheme's unstructured conversion,
// so fields a kind does not have are dropped on the way out, as protobuf cannot carry them.
type ProtobufCodec struct {
	scheme *runtime.Scheme
	enc    *protobuf.Serializer    // enveloped: bodies and the objects inside watch events
	raw    *protobuf.RawSerializer // bare: the watch events themselves
	lists  sync.Map                // list kinds' listFieldNumbers, by GroupVersionKind

	// supported holds Supports' answers: the front asks for every request with a body or an
	// Accept header, and each answer made a new object of the kind (a Deployment is a kilobyte).
	// The scheme is never changed once built, so an answer never changes.
	mu        sync.RWMutex
	supported map[schema.GroupVersionKind]bool
}

// maxSupported bounds the answers Supports keeps: the front asks about the kinds it serves, but
// the scheme answers for its unversioned kinds (Status, ...) in any group and version.
const maxSupported = 4096

var _ rest.Codec = (*ProtobufCodec)(nil)

// NewProtobufCodec returns the protobuf codec of the built-in API.
func NewProtobufCodec() *ProtobufCodec {
	s := builtinScheme()
	return &ProtobufCodec{scheme: s, enc: protobuf.NewSerializer(s, s), raw: protobuf.NewRawSerializer(s, s)}
}

// builtinScheme is newScheme, built once: registering every kind of the built-in API took
// about a tenth of a harness run's CPU when each run's REST front built its own. A scheme is
// only read once built, so codecs share it.
var builtinScheme = sync.OnceValue(newScheme)

// newScheme is client-go's scheme of the built-in API plus what kube-apiserver also knows of
// meta.k8s.io: Table and PartialObjectMetadata (server-side printing, metadata clients) and the
// options kinds in meta.k8s.io/v1 (a DeleteOptions body may name either group).
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientscheme.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	utilruntime.Must(metav1.AddMetaToScheme(s))
	return s
}

// MediaType implements rest.Codec.
func (c *ProtobufCodec) MediaType() string { return ProtobufMediaType }

// StreamMediaType implements rest.Codec.
func (c *ProtobufCodec) StreamMediaType() string { return ProtobufStreamMediaType }

// Supports implements rest.Codec: the kinds of the built-in API and of meta.k8s.io whose Go
// type has protobuf marshalling. Table has none, so kube-apiserver serves it in JSON only.
func (c *ProtobufCodec) Supports(gvk schema.GroupVersionKind) bool {
	if gvk.Kind == "" {
		return false
	}
	c.mu.RLock()
	ok, known := c.supported[gvk]
	c.mu.RUnlock()
	if known {
		return ok
	}
	ok = c.supports(gvk)
	c.mu.Lock()
	if len(c.supported) < maxSupported {
		if c.supported == nil {
			c.supported = map[schema.GroupVersionKind]bool{}
		}
		c.supported[gvk] = ok
	}
	c.mu.Unlock()
	return ok
}

// supports is Supports, asking the scheme.
func (c *ProtobufCodec) supports(gvk schema.GroupVersionKind) bool {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return false
	}
	_, marshals := obj.(interface{ Marshal() ([]byte, error) })
	_, unmarshals := obj.(interface{ Unmarshal([]byte) error })
	return marshals && unmarshals
}

// Encode implements rest.Codec.
func (c *ProtobufCodec) Encode(obj runtime.Object) ([]byte, error) {
	typed, err := c.typed(obj)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := c.enc.Encode(typed, &b); err != nil {
		return nil, fmt.Errorf("kube: protobuf encoding of %s: %w", typed.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return b.Bytes(), nil
}

// typed returns obj as a Go type of the scheme: unstructured objects and lists are converted,
// anything else (the meta.k8s.io types) is returned as it is.
func (c *ProtobufCodec) typed(obj runtime.Object) (runtime.Object, error) {
	var content map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		content = o.Object
	case *unstructured.UnstructuredList:
		content = o.UnstructuredContent()
	default:
		if obj.GetObjectKind().GroupVersionKind().Empty() {
			return nil, fmt.Errorf("kube: protobuf encoding of a %T without its kind", obj)
		}
		return obj, nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	out, err := c.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kube: no protobuf form for %v: %w", gvk, err)
	}
	if err := FromUnstructured(content, out); err != nil {
		// The converter is stricter than JSON in places; what kube-apiserver would have
		// accepted is what JSON decoding accepts.
		if err := intoJSON(content, out); err != nil {
			return nil, fmt.Errorf("kube: the object does not fit the schema of %s: %w", gvk.Kind, err)
		}
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

// intoJSON decodes content into out through its JSON form, as kube-apiserver decodes a JSON
// body: a misfit is encoding/json's error, which names the field and the Go type.
func intoJSON(content map[string]any, out runtime.Object) error {
	b, err := json.Marshal(content)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// Decode implements rest.Codec: an object body must be of kind gvk; an options body
// (DeleteOptions) is decoded into into.
func (c *ProtobufCodec) Decode(body []byte, gvk schema.GroupVersionKind, into runtime.Object) error {
	if u, ok := into.(*unstructured.Unstructured); ok {
		obj, actual, err := c.enc.Decode(body, &gvk, nil)
		if err != nil {
			return err
		}
		if *actual != gvk {
			return fmt.Errorf("%s cannot be handled as a %s", actual.Kind, gvk.Kind)
		}
		m, err := toUnstructuredObject(obj)
		if err != nil {
			return err
		}
		u.Object = m
		u.SetGroupVersionKind(gvk)
		return nil
	}
	obj, actual, err := c.enc.Decode(body, &gvk, into)
	if err != nil {
		return err
	}
	if obj != into {
		return fmt.Errorf("%s cannot be handled as a %s", actual.Kind, gvk.Kind)
	}
	return nil
}

// EncodeWatchEvent implements rest.Codec: one frame of a protobuf watch stream.
func (c *ProtobufCodec) EncodeWatchEvent(typ watch.EventType, obj runtime.Object) ([]byte, error) {
	inner, err := c.Encode(obj)
	if err != nil {
		return nil, err
	}
	return c.frame(typ, inner)
}

// frame returns the watch stream frame of an event of type typ whose object's body is inner.
func (c *ProtobufCodec) frame(typ watch.EventType, inner []byte) ([]byte, error) {
	ev := &metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: inner}}
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0}) // the length, filled in below
	if err := c.raw.Encode(ev, &b); err != nil {
		return nil, fmt.Errorf("kube: protobuf encoding of a watch event: %w", err)
	}
	frame := b.Bytes()
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	return frame, nil
}

var _ rest.TypeChecker = (*ProtobufCodec)(nil)

// CheckObject implements rest.TypeChecker: obj converts to the Go type of its kind (fields the
// type lacks are ignored, as the front keeps them).
func (c *ProtobufCodec) CheckObject(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) error {
	out, err := c.scheme.New(gvk)
	if err != nil {
		return fmt.Errorf("no Go type for %v: %w", gvk, err)
	}
	return intoJSON(obj.Object, out)
}

var _ rest.ItemCodec = (*ProtobufCodec)(nil)

// protobufPrefix is apimachinery's protobuf envelope's magic, before the runtime.Unknown.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// EncodeItem implements rest.ItemCodec: the item of an object is its Go type's protobuf
// marshalling, what the envelope's runtime.Unknown carries as Raw and a list carries as an
// element of its items.
func (c *ProtobufCodec) EncodeItem(obj *unstructured.Unstructured) ([]byte, error) {
	typed, err := c.typed(obj)
	if err != nil {
		return nil, err
	}
	m, ok := typed.(interface{ Marshal() ([]byte, error) })
	if !ok {
		return nil, fmt.Errorf("kube: no protobuf marshalling for %T", typed)
	}
	return m.Marshal()
}

// ItemBody implements rest.ItemCodec: the envelope around item, as protobuf.Serializer writes it.
func (c *ProtobufCodec) ItemBody(gvk schema.GroupVersionKind, item []byte) ([]byte, error) {
	return envelope(gvk, len(item), func(dst []byte) []byte { return append(dst, item...) })
}

// ItemList implements rest.ItemCodec: the list type's marshalling (its ListMeta, then each item
// as an element of its items, under the field numbers of the type's protobuf tags), enveloped.
// The list is written straight into the envelope: a LIST of thousands of objects is megabytes.
func (c *ProtobufCodec) ItemList(gvk schema.GroupVersionKind, meta metav1.ListMeta, items [][]byte) ([]byte, error) {
	fields, err := c.listFields(gvk)
	if err != nil {
		return nil, err
	}
	mb, err := meta.Marshal()
	if err != nil {
		return nil, fmt.Errorf("kube: protobuf encoding of a list's metadata: %w", err)
	}
	size := fieldSize(fields.meta, mb)
	for _, it := range items {
		size += fieldSize(fields.items, it)
	}
	return envelope(gvk, size, func(dst []byte) []byte {
		dst = appendField(dst, fields.meta, mb)
		for _, it := range items {
			dst = appendField(dst, fields.items, it)
		}
		return dst
	})
}

// envelope returns apimachinery's protobuf envelope of an object of kind gvk whose marshalling,
// size bytes long, writeRaw appends: the magic, then a runtime.Unknown of the kind's type meta,
// the marshalling as Raw, and empty contentEncoding and contentType, the fields in the order
// runtime.Unknown's generated marshalling writes them.
func envelope(gvk schema.GroupVersionKind, size int, writeRaw func([]byte) []byte) ([]byte, error) {
	tm := runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	tmb, err := tm.Marshal()
	if err != nil {
		return nil, fmt.Errorf("kube: protobuf envelope of %s: %w", gvk.Kind, err)
	}
	unknownSize := 1 + uvarintLen(uint64(len(tmb))) + len(tmb) + 1 + uvarintLen(uint64(size)) + size + 2 + 2
	body := make([]byte, 0, len(protobufPrefix)+unknownSize)
	body = append(body, protobufPrefix...)
	body = appendField(body, 1, tmb)
	body = binary.AppendUvarint(body, 2<<3|2)
	body = binary.AppendUvarint(body, uint64(size))
	start := len(body)
	body = writeRaw(body)
	if len(body)-start != size {
		return nil, fmt.Errorf("kube: protobuf envelope of %s: %d bytes written for %d", gvk.Kind, len(body)-start, size)
	}
	body = append(body, 3<<3|2, 0, 4<<3|2, 0) // contentEncoding, contentType: empty
	return body, nil
}

// ItemWatchEvent implements rest.ItemCodec: EncodeWatchEvent's frame around item's body.
func (c *ProtobufCodec) ItemWatchEvent(typ watch.EventType, gvk schema.GroupVersionKind, item []byte) ([]byte, error) {
	inner, err := c.ItemBody(gvk, item)
	if err != nil {
		return nil, err
	}
	return c.frame(typ, inner)
}

// listFieldNumbers are the protobuf field numbers of a list type's metadata and items.
type listFieldNumbers struct{ meta, items uint64 }

// listFields returns the field numbers of the list kind gvk, read from its Go type's protobuf
// tags once and kept: every list of k8s.io/api is TypeMeta (not marshalled), ListMeta and Items,
// and one that is not is refused rather than guessed.
func (c *ProtobufCodec) listFields(gvk schema.GroupVersionKind) (listFieldNumbers, error) {
	if f, ok := c.lists.Load(gvk); ok {
		return f.(listFieldNumbers), nil
	}
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return listFieldNumbers{}, fmt.Errorf("kube: no protobuf form for %v: %w", gvk, err)
	}
	t := reflect.TypeOf(obj).Elem()
	var f listFieldNumbers
	for i := range t.NumField() {
		sf := t.Field(i)
		num := protobufFieldNumber(sf.Tag.Get("protobuf"))
		switch {
		case sf.Type == reflect.TypeFor[metav1.TypeMeta]():
		case sf.Type == reflect.TypeFor[metav1.ListMeta]() && num > 0:
			f.meta = num
		case sf.Name == "Items" && sf.Type.Kind() == reflect.Slice && num > 0:
			f.items = num
		default:
			return listFieldNumbers{}, fmt.Errorf("kube: %v is not a list of TypeMeta, ListMeta and Items (field %s)", gvk, sf.Name)
		}
	}
	if f.meta == 0 || f.items == 0 {
		return listFieldNumbers{}, fmt.Errorf("kube: %v has no ListMeta or Items with a protobuf field number", gvk)
	}
	c.lists.Store(gvk, f)
	return f, nil
}

// protobufFieldNumber reads the field number of a gogo protobuf struct tag
// ("bytes,2,rep,name=items"), 0 if there is none.
func protobufFieldNumber(tag string) uint64 {
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return 0
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return 0
	}
	return uint64(n)
}

// appendField appends a length-delimited protobuf field (wire type 2): its tag, the length of
// b, then b, as gogo's generated marshalling writes a nested message.
func appendField(dst []byte, num uint64, b []byte) []byte {
	dst = binary.AppendUvarint(dst, num<<3|2)
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// fieldSize is the length appendField appends.
func fieldSize(num uint64, b []byte) int {
	return uvarintLen(num<<3|2) + uvarintLen(uint64(len(b))) + len(b)
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}
