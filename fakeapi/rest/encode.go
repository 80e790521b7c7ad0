package rest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/internal/fastpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// representation is what a client asked for with its Accept header.
type representation int

const (
	repObject  representation = iota // the objects themselves
	repTable                         // meta.k8s.io Table (kubectl get)
	repPartial                       // meta.k8s.io PartialObjectMetadata(List) (metadata clients)
)

// format is a negotiated response: a representation in JSON (codec nil) or in a Codec's media
// type.
type format struct {
	rep   representation
	codec Codec
}

var (
	formatObject  = format{rep: repObject}
	formatTable   = format{rep: repTable}
	formatPartial = format{rep: repPartial}
)

// acceptEntry is one media range of an Accept header.
type acceptEntry struct {
	mediaType string
	params    map[string]string
	q         float64
}

// parseAccept splits an Accept header into its media ranges, highest quality first (stable
// among equals, so the client's order decides ties), leaving out malformed ranges and q=0.
func parseAccept(accept string) []acceptEntry {
	var out []acceptEntry
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			v, err := strconv.ParseFloat(qs, 64)
			if err != nil || v < 0 || v > 1 {
				continue
			}
			q = v
			delete(params, "q")
		}
		if q == 0 {
			continue
		}
		out = append(out, acceptEntry{mediaType: mt, params: params, q: q})
	}
	slices.SortStableFunc(out, func(a, b acceptEntry) int { return cmp.Compare(b.q, a.q) })
	return out
}

// metaKinds are the meta.k8s.io kinds of the alternative representations.
var (
	tableGVK   = metav1.SchemeGroupVersion.WithKind("Table")
	partialGVK = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")
)

// negotiate picks the first representation of the Accept header, in quality order, that the
// front can produce for t's kind: JSON always, a codec's media type when the codec supports the
// kind (custom resources have no protobuf form, so a client listing JSON after protobuf gets
// JSON, as from kube-apiserver). Nothing acceptable is 406.
func (h *Handler) negotiate(accept string, t target) (format, error) {
	if strings.TrimSpace(accept) == "" {
		return formatObject, nil
	}
	for _, e := range parseAccept(accept) {
		var f format
		switch e.mediaType {
		case "application/json", "application/*", "*/*":
		default:
			c := h.codecs[e.mediaType]
			if c == nil {
				continue
			}
			f.codec = c
		}
		as, g, v := e.params["as"], e.params["g"], e.params["v"]
		switch {
		case as == "":
			f.rep = repObject
			if f.codec != nil && !f.codec.Supports(t.bodyKind()) {
				continue
			}
		case g != metav1.GroupName || (v != "v1" && v != "v1beta1"):
			continue
		case as == "Table":
			f.rep = repTable
			if f.codec != nil && !f.codec.Supports(tableGVK) {
				continue
			}
		case as == "PartialObjectMetadata" || as == "PartialObjectMetadataList":
			f.rep = repPartial
			if f.codec != nil && !f.codec.Supports(partialGVK) {
				continue
			}
		default:
			continue
		}
		return f, nil
	}
	accepted := "application/json"
	for _, mt := range h.codecOrder {
		accepted += ", " + mt
	}
	return format{}, newStatus(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: "+accepted)
}

// writeJSON writes v as a JSON response with code: the bytes of json.Marshal(v), produced by
// the front's encoder (jsonenc.go).
func (h *Handler) writeJSON(w http.ResponseWriter, code int, v any) {
	e := getEncoder()
	defer putEncoder(e)
	if err := e.value(v); err != nil {
		writeEncodingError(w, err)
		return
	}
	writeBody(w, code, e.buf)
}

// writeEncoded writes obj in c's media type.
func (h *Handler) writeEncoded(w http.ResponseWriter, code int, c Codec, obj runtime.Object) {
	body, err := c.Encode(obj)
	if err != nil {
		writeEncodingError(w, err)
		return
	}
	writeEncodedBody(w, code, c, body)
}

// writeEncodedBody writes body, in c's media type.
// body is a codec's (the caller's, seam.go) or a shared item, never written again, so it is
// handed over without a copy where the writer can take it (handOver).
func writeEncodedBody(w http.ResponseWriter, code int, c Codec, body []byte) {
	w.Header().Set("Content-Type", c.MediaType())
	handOver(w, code, body)
}

// A BodyAdopter is an http.ResponseWriter that can take a whole response body without
// copying it, as an in-process transport's can (Transport's, and clientgo's harness's): the
// front hands it the bodies it never writes again (a codec's result, an item of its encoding
// cache; handOver). AdoptBody takes body as the whole response body, once the header is written
// and when nothing was written yet, or reports false, and the front then writes body as usual.
// The writer and whoever reads the response may only read body.
type BodyAdopter interface {
	http.ResponseWriter
	AdoptBody(body []byte) bool
}

// handOver writes body with its Content-Length and code. body must never be written again by
// anyone (a codec's result, or an item of the shared cache): the in-process transport then
// takes it as the response instead of copying it. A body in a pooled buffer goes through
// writeSized.
func handOver(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	if a, ok := w.(BodyAdopter); ok && a.AdoptBody(body) {
		return
	}
	_, _ = w.Write(body)
}

// writeSized writes body with its Content-Length and code, copied as every Write is.
func writeSized(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func writeEncodingError(w http.ResponseWriter, err error) {
	writeError(w, apierrors.NewInternalError(fmt.Errorf("rest: encoding the response: %w", err)))
}

func writeBody(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	writeSized(w, code, body)
}

// writeError writes err's Status with its code; a Status with RetryAfterSeconds also sets the
// Retry-After header (429 and 5xx), which client-go's request retry loop honours.
func writeError(w http.ResponseWriter, err error) {
	st := statusOf(err)
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	body, _ := json.Marshal(st) // a Status always encodes
	writeBody(w, int(st.Code), body)
}

// statusOf returns err's Status with its type meta, code and status filled in.
func statusOf(err error) *metav1.Status {
	var st metav1.Status
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		st = api.Status()
	} else {
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	return &st
}

// fail answers an error from fakeapi. Status errors become Status responses. Any other error is
// a transport fault injected with Faults.FailNext (NewConnectionRefused, say): the in-process
// transport hands it to the client as RoundTrip's error, and a real listener drops the
// connection, which is what a client of a dead apiserver sees. A request whose context ended
// gets nothing: its client is gone.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var api apierrors.APIStatus
	switch {
	case errors.As(err, &api):
		writeError(w, err)
	case r.Context().Err() != nil:
	default:
		if slot, ok := r.Context().Value(faultKey{}).(*faultSlot); ok {
			slot.set(err)
			return
		}
		if conn, _, herr := http.NewResponseController(w).Hijack(); herr == nil {
			_ = conn.Close()
			return
		}
		writeError(w, apierrors.NewInternalError(err))
	}
}

// writeObject writes one object in the negotiated format. shared says u is a committed version
// of the object (not a dry run's answer), whose encoding may be shared (encache.go).
func (h *Handler) writeObject(w http.ResponseWriter, t target, code int, u *unstructured.Unstructured, f format, shared bool) {
	u = t.fromStore(u)
	if f.rep == repObject {
		if f.codec == nil {
			item, _, err := h.item(nil, u, shared)
			if err != nil {
				writeEncodingError(w, err)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			handOver(w, code, item)
			return
		}
		if ic, ok := f.codec.(ItemCodec); ok {
			item, _, err := h.item(ic, u, shared)
			var body []byte
			if err == nil {
				body, err = ic.ItemBody(u.GroupVersionKind(), item)
			}
			if err != nil {
				writeEncodingError(w, err)
				return
			}
			writeEncodedBody(w, code, ic, body)
			return
		}
	}
	if f.codec != nil {
		var obj runtime.Object = u
		switch f.rep {
		case repTable:
			tbl, err := h.toTable(t, []unstructured.Unstructured{*u}, listMeta(u.GetResourceVersion(), ""), true)
			if err != nil {
				writeError(w, err)
				return
			}
			obj = tbl
		case repPartial:
			obj = toPartialObject(u)
		}
		h.writeEncoded(w, code, f.codec, obj)
		return
	}
	switch f.rep {
	case repTable:
		tbl, err := h.toTable(t, []unstructured.Unstructured{*u}, listMeta(u.GetResourceVersion(), ""), true)
		if err != nil {
			writeError(w, err)
			return
		}
		h.writeJSON(w, code, tbl)
	case repPartial:
		h.writeJSON(w, code, toPartial(u))
	default:
		h.writeJSON(w, code, u.Object)
	}
}

// writeList writes a list in the negotiated format. The list is encoded from its maps directly:
// LIST of many objects is the hot path of informer start-up.
// lent says l's items are the server's own objects, lent (Handler.list).
func (h *Handler) writeList(w http.ResponseWriter, t target, l *unstructured.UnstructuredList, f format, lent bool) {
	if t.res.view() {
		// A view's list: the items as the view serves them, no longer the server's own.
		v := &unstructured.UnstructuredList{Object: map[string]any{}, Items: make([]unstructured.Unstructured, len(l.Items))}
		for k, x := range l.Object {
			v.Object[k] = x
		}
		v.SetAPIVersion(t.res.GVR.GroupVersion().String())
		for i := range l.Items {
			v.Items[i] = *t.fromStore(&l.Items[i])
		}
		l, lent = v, false
	}
	meta := listMeta(l.GetResourceVersion(), l.GetContinue())
	meta.RemainingItemCount = l.GetRemainingItemCount()
	if ic, ok := f.codec.(ItemCodec); ok && f.rep == repObject {
		items, err := h.listItems(ic, l.Items, lent)
		if err != nil {
			writeEncodingError(w, err)
			return
		}
		body, err := ic.ItemList(l.GroupVersionKind(), meta, items)
		if err != nil {
			writeEncodingError(w, err)
			return
		}
		writeEncodedBody(w, http.StatusOK, ic, body)
		return
	}
	if f.codec != nil {
		var obj runtime.Object = l
		switch f.rep {
		case repTable:
			tbl, err := h.toTable(t, l.Items, meta, true)
			if err != nil {
				writeError(w, err)
				return
			}
			obj = tbl
		case repPartial:
			pl := &metav1.PartialObjectMetadataList{
				TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "PartialObjectMetadataList"},
				ListMeta: meta,
				Items:    make([]metav1.PartialObjectMetadata, len(l.Items)),
			}
			for i := range l.Items {
				pl.Items[i] = *toPartialObject(&l.Items[i])
			}
			obj = pl
		}
		h.writeEncoded(w, http.StatusOK, f.codec, obj)
		return
	}
	switch f.rep {
	case repTable:
		tbl, err := h.toTable(t, l.Items, meta, true)
		if err != nil {
			writeError(w, err)
			return
		}
		h.writeJSON(w, http.StatusOK, tbl)
	case repPartial:
		items := make([]any, len(l.Items))
		for i := range l.Items {
			items[i] = toPartial(&l.Items[i])
		}
		h.writeJSON(w, http.StatusOK, map[string]any{
			"apiVersion": metav1.SchemeGroupVersion.String(), "kind": "PartialObjectMetadataList",
			"metadata": meta, "items": items,
		})
	default:
		e := getEncoder()
		defer putEncoder(e)
		items, err := h.listItems(nil, l.Items, lent)
		if err == nil {
			var lm any = meta
			if !t.res.builtin {
				lm = unstructuredListMeta(meta)
			}
			err = e.list(l, lm, items)
		}
		if err != nil {
			writeEncodingError(w, err)
			return
		}
		if len(e.buf) > handOverBuffer {
			// A body this large is copied at a cost the pool does not repay: the response
			// keeps the buffer, and the pooled encoder starts a new one.
			body := e.buf
			e.buf = nil
			w.Header().Set("Content-Type", "application/json")
			handOver(w, http.StatusOK, body)
			return
		}
		writeBody(w, http.StatusOK, e.buf)
	}
}

// list appends l as json.Marshal encodes the map {"apiVersion", "kind", "metadata": meta,
// "items": the objects} (keys in sorted order), with items the encodings of l's objects (their
// shared items, encache.go), rather than building the map and a slice of all the items first.
// meta is a metav1.ListMeta, or its unstructured form (unstructuredListMeta).
func (e *jsonEncoder) list(l *unstructured.UnstructuredList, meta any, items [][]byte) error {
	size := 256
	for _, b := range items {
		size += len(b) + 1
	}
	// Sized once: growing a list of megabytes by doubling copies it several times over.
	e.buf = slices.Grow(e.buf, size)
	e.buf = append(e.buf, `{"apiVersion":`...)
	e.buf = appendJSONString(e.buf, l.GetAPIVersion())
	e.buf = append(e.buf, `,"items":[`...)
	for i, b := range items {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, b...)
	}
	e.buf = append(e.buf, `],"kind":`...)
	e.buf = appendJSONString(e.buf, l.GetKind())
	e.buf = append(e.buf, `,"metadata":`...)
	if err := e.value(meta); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}

func listMeta(rv, cont string) metav1.ListMeta {
	return metav1.ListMeta{ResourceVersion: rv, Continue: cont}
}

// unstructuredListMeta is meta as kube-apiserver writes a custom resource's list, which it
// serves unstructured: the list's continue is always set, "" on the last page (an
// UnstructuredList's SetContinue writes the field whatever its value), where a built-in kind's
// typed list leaves it out.
func unstructuredListMeta(meta metav1.ListMeta) map[string]any {
	m := map[string]any{"continue": meta.Continue, "resourceVersion": meta.ResourceVersion}
	if meta.RemainingItemCount != nil {
		m["remainingItemCount"] = *meta.RemainingItemCount
	}
	return m
}

// toPartial is the PartialObjectMetadata of u: its type meta becomes meta.k8s.io's.
func toPartial(u *unstructured.Unstructured) map[string]any {
	return map[string]any{
		"apiVersion": metav1.SchemeGroupVersion.String(),
		"kind":       "PartialObjectMetadata",
		"metadata":   u.Object["metadata"],
	}
}

// toPartialObject is the PartialObjectMetadata of u as a typed object, for codecs.
func toPartialObject(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "PartialObjectMetadata"}}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		// The stored metadata was validated on write, so it converts; a failure leaves it empty.
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(md, &p.ObjectMeta)
	}
	return p
}

// now reads the fake apiserver's clock (never the wall clock: ages agree with its timestamps).
func (h *Handler) now() time.Time { return h.clock.Now() }

// toTable is the server-side printing kube-apiserver does for a resource without its own
// printer (custom resources without printer columns): a Name and an Age column, one row per
// object, each carrying the object's PartialObjectMetadata (includeObject=Metadata), which is
// what kubectl needs for namespaces and labels. Ages are human durations ("5m") computed at now,
// as the apiserver computes them. headers false omits the column definitions, as in every watch
// event after the first.
func (h *Handler) toTable(t target, items []unstructured.Unstructured, meta metav1.ListMeta, headers bool) (*metav1.Table, error) {
	now := h.now()
	if h.tables != nil {
		custom, err := h.tables.ConvertToTable(context.Background(), &TableRequest{GVK: t.bodyKind(), Definition: t.res.definition(), Objects: items, Now: now})
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if custom != nil {
			if len(custom.Rows) != len(items) {
				return nil, apierrors.NewInternalError(fmt.Errorf("rest: a table of %d rows for %d objects", len(custom.Rows), len(items)))
			}
			tbl := &metav1.Table{
				TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: metav1.SchemeGroupVersion.String()},
				ListMeta: meta,
				Rows:     make([]metav1.TableRow, len(items)),
			}
			if headers {
				tbl.ColumnDefinitions = custom.ColumnDefinitions
			}
			for i := range items {
				raw, _ := json.Marshal(toPartial(&items[i])) // plain maps always encode
				tbl.Rows[i] = metav1.TableRow{Cells: custom.Rows[i].Cells, Object: runtime.RawExtension{Raw: raw}}
			}
			return tbl, nil
		}
	}
	tbl := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: metav1.SchemeGroupVersion.String()},
		ListMeta: meta,
		Rows:     []metav1.TableRow{},
	}
	if headers {
		tbl.ColumnDefinitions = []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Age", Type: "date", Description: "CreationTimestamp is the time the object was created."},
		}
	}
	for i := range items {
		u := &items[i]
		raw, _ := json.Marshal(toPartial(u)) // plain maps always encode
		age := "<unknown>"
		if ts := u.GetCreationTimestamp(); !ts.IsZero() {
			age = duration.HumanDuration(now.Sub(ts.Time))
		}
		tbl.Rows = append(tbl.Rows, metav1.TableRow{
			Cells:  []any{u.GetName(), age},
			Object: runtime.RawExtension{Raw: raw},
		})
	}
	return tbl, nil
}

// encodingOf names ic's encoding in the shared cache: its media type, "" for JSON (nil).
func encodingOf(ic ItemCodec) string {
	if ic == nil {
		return ""
	}
	return ic.MediaType()
}

// item returns u's item (encache.go) in ic's encoding, or in JSON when ic is nil: from the
// handler's shared cache when shared says u is a committed version, encoded and kept there when
// it is not in it yet. committed says whether u is one by its key (versionKey), whatever shared
// says.
func (h *Handler) item(ic ItemCodec, u *unstructured.Unstructured, shared bool) (b []byte, committed bool, err error) {
	k, committed := versionKey(encodingOf(ic), u)
	shared = shared && committed && fastpath.Use(fastpath.SharedEncodings) // a plain build encodes every time
	if shared {
		if b, ok := h.items.get(k); ok {
			return b, true, nil
		}
	}
	if ic != nil {
		b, err = ic.EncodeItem(u)
	} else {
		e := getEncoder()
		if err = e.value(u.Object); err == nil {
			b = slices.Clone(e.buf)
		}
		putEncoder(e)
	}
	if err == nil && shared {
		h.items.put(k, b)
	}
	return b, committed, err
}

// lentItem is item for u, an object the server lent (a watch event's): looked up by content
// first (contentKey), and kept by content too when it is a committed version.
func (h *Handler) lentItem(ic ItemCodec, u *unstructured.Unstructured) ([]byte, error) {
	if !fastpath.Use(fastpath.SharedEncodings) {
		b, _, err := h.item(ic, u, false)
		return b, err
	}
	encoding := encodingOf(ic)
	if b, ok := h.items.getContent(encoding, u); ok {
		return b, nil
	}
	b, committed, err := h.item(ic, u, true)
	if err == nil && committed {
		h.items.putContent(encoding, u, b)
	}
	return b, err
}

// listItems returns the items of a LIST's objects, all committed versions, as item does, with
// one lookup of the shared cache for all of them and one store of those it did not hold. Objects
// lent by the server (lent) are looked up by content first (contentKey), which reads nothing of
// them.
func (h *Handler) listItems(ic ItemCodec, objs []unstructured.Unstructured, lent bool) ([][]byte, error) {
	encoding := encodingOf(ic)
	items := make([][]byte, len(objs))
	if !fastpath.Use(fastpath.SharedEncodings) { // a plain build encodes every item
		for i := range objs {
			b, _, err := h.item(ic, &objs[i], false)
			if err != nil {
				return nil, err
			}
			items[i] = b
		}
		return items, nil
	}
	var rest []int // the objects not found by content
	if lent {
		rest = h.items.getLent(encoding, objs, items)
		if len(rest) == 0 {
			return items, nil
		}
	} else {
		rest = make([]int, len(objs))
		for i := range rest {
			rest[i] = i
		}
	}
	keys := make([]encKey, len(rest))
	shared := make([]bool, len(rest))
	for j, i := range rest {
		keys[j], shared[j] = versionKey(encoding, &objs[i])
	}
	found := h.items.getAll(keys, shared)
	var missed []int // indexes into rest of the items encoded here
	for j, i := range rest {
		if found[j] != nil {
			items[i] = found[j]
			continue
		}
		b, _, err := h.item(ic, &objs[i], false) // encoded here, stored below with the others
		if err != nil {
			return nil, err
		}
		items[i], found[j] = b, b
		if shared[j] {
			missed = append(missed, j)
		}
	}
	h.items.putAll(keys, found, missed)
	if lent {
		committed := rest[:0] // rest is not read again
		for j, i := range rest {
			if shared[j] {
				committed = append(committed, i)
			}
		}
		h.items.putLent(encoding, objs, items, committed)
	}
	return items, nil
}
