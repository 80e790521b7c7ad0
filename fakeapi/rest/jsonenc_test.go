package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/informersim/informersim/internal/jsonrand"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// randomString draws strings made of the characters escaping distinguishes: plain ASCII,
// quotes and backslashes, every control character, HTML characters, multi-byte runes, the
// line separators, U+FFFD itself and invalid UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", "~", "\x7f", `"`, `\`, "/", "<", ">", "&", "é", "世", "😀",
		"\u2028", "\u2029", "\u2027", "\u202a", "\ufffd", "\xff", "\xe4\xb8", "\xed\xa0\x80", "\xc0\xaf"}
	var b strings.Builder
	for n := r.IntN(8); n > 0; n-- {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.IntN(0x20))) // a control character
			continue
		}
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randomFloat draws floats across the magnitudes where encoding/json switches formats.
func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(6) {
	case 0:
		return []float64{0, math.Copysign(0, -1), 1e-6, 1e-7, 1e21, 1e20, 999999999999999999999, 1.5, math.Inf(1),
			math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1e-10, 1e100}[r.IntN(16)]
	case 1:
		return float64(r.Int64()) * []float64{1, -1}[r.IntN(2)]
	default:
		return math.Float64frombits(r.Uint64()) // any bit pattern, NaNs included
	}
}

// randomValue is jsonrand.Random with random strings, keys, floats and int64s mixed in.
func randomValue(r *rand.Rand, depth int) any {
	switch r.IntN(10) {
	case 0:
		return randomString(r)
	case 1:
		return randomFloat(r)
	case 2:
		return r.Int64() - r.Int64()
	case 3, 4:
		if depth < 4 {
			m := map[string]any{}
			for n := r.IntN(6); n > 0; n-- {
				m[randomString(r)] = randomValue(r, depth+1)
			}
			return m
		}
	case 5:
		if depth < 4 {
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = randomValue(r, depth+1)
			}
			return l
		}
	}
	return jsonrand.Random(r, depth)
}

// wireEvent is a watch event as encoding/json writes it from a struct.
type wireEvent struct {
	Type   watch.EventType `json:"type"`
	Object any             `json:"object"`
}

// TestListAndEventEncodings checks the list and watch event encodings against encoding/json
// on the maps and structs they stand for, with random objects as items.
func TestListAndEventEncodings(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 2))
	for n := range 300 {
		l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": randomString(r), "kind": randomString(r)}}
		objects := make([]map[string]any, n%7)
		for i := range objects {
			m, _ := randomValue(r, 1).(map[string]any)
			if r.IntN(10) > 0 && m == nil {
				m = map[string]any{"x": randomValue(r, 1)}
			}
			objects[i] = m
			l.Items = append(l.Items, unstructured.Unstructured{Object: m})
		}
		meta := metav1.ListMeta{ResourceVersion: randomString(r), Continue: randomString(r)}
		if r.IntN(2) == 0 {
			rem := r.Int64()
			meta.RemainingItemCount = &rem
		}
		want, wantErr := json.Marshal(map[string]any{"apiVersion": l.GetAPIVersion(), "kind": l.GetKind(), "metadata": meta, "items": objects})
		e := getEncoder()
		// The items as the front's cache holds them; one that does not encode fails the list.
		items := make([][]byte, len(l.Items))
		var err error
		for i := range l.Items {
			ie := getEncoder()
			err = ie.value(l.Items[i].Object)
			items[i] = slices.Clone(ie.buf)
			putEncoder(ie)
			if err != nil {
				break
			}
		}
		if err == nil {
			err = e.list(l, meta, items)
		}
		if (err != nil) != (wantErr != nil) || err == nil && !bytes.Equal(e.buf, want) {
			t.Fatalf("list:\nencoder       %s (%v)\nencoding/json %s (%v)", e.buf, err, want, wantErr)
		}
		putEncoder(e)

		obj := randomValue(r, 0)
		typ := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error}[r.IntN(5)]
		var buf bytes.Buffer
		wantErr = json.NewEncoder(&buf).Encode(wireEvent{Type: typ, Object: obj})
		e = getEncoder()
		err = e.event(typ, obj)
		if (err != nil) != (wantErr != nil) || err == nil && !bytes.Equal(e.buf, buf.Bytes()) {
			t.Fatalf("event:\nencoder      %q (%v)\njson.Encoder %q (%v)", e.buf, err, buf.Bytes(), wantErr)
		}
		putEncoder(e)
	}
}
