package rest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// checkStrings is the table of strings decodeObjectWith takes its strings from in every
// checkDecode, so that later bodies find the strings of earlier ones (and fill it, so that it
// starts again).
var checkStrings struct {
	sync.Mutex
	table stringTable
}

// checkDecode fails the test if decodeObject accepts data and decodes it differently from
// utiljson.Unmarshal (or accepts what Unmarshal refuses), or if decodeObjectWith, with the
// strings of the bodies checked before, answers differently from decodeObject. It reports
// whether it accepted.
func checkDecode(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := decodeObject(data)
	checkStrings.Lock()
	withStrings, okWith := decodeObjectWith(data, &checkStrings.table)
	checkStrings.Unlock()
	if okWith != ok || !reflect.DeepEqual(withStrings, got) {
		t.Fatalf("%q: decodeObjectWith %#v, %v; decodeObject %#v, %v", data, withStrings, okWith, got, ok)
	}
	if !ok {
		return false
	}
	var want map[string]any
	if err := utiljson.Unmarshal(data, &want); err != nil {
		t.Fatalf("%q: decodeObject accepted what Unmarshal refuses (%v): %#v", data, err, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\ndecodeObject %#v\nUnmarshal    %#v", data, got, want)
	}
	return true
}

// jsonVariants writes v as JSON in forms Unmarshal reads alike: compact, indented, with
// every non-ASCII character and some ASCII ones escaped (\u, surrogate pairs, short escapes).
func jsonVariants(r *rand.Rand, v any) [][]byte {
	compact, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	indented, _ := json.MarshalIndent(v, " ", "\t")
	var escaped strings.Builder
	inString := false
	for i, c := range string(compact) { // re-escape inside strings; i is a byte offset
		switch {
		case c == '"' && (i == 0 || compact[i-1] != '\\' || (i > 1 && compact[i-2] == '\\')):
			inString = !inString
			escaped.WriteRune(c)
		case inString && c > 0x7f && r.IntN(2) == 0:
			escaped.WriteString(strings.Trim(strings.ReplaceAll(strconvQuoteToASCII(string(c)), `\U`, `\u`), `"`))
		case inString && c == '/' && r.IntN(2) == 0:
			escaped.WriteString(`\/`)
		default:
			escaped.WriteRune(c)
		}
	}
	return [][]byte{compact, indented, []byte(escaped.String())}
}

// strconvQuoteToASCII quotes s with \u escapes, supplementary runes as JSON surrogate pairs.
func strconvQuoteToASCII(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		if c > 0xffff {
			c -= 0x10000
			b.WriteString(`\u` + hex16(0xd800+(c>>10)) + `\u` + hex16(0xdc00+(c&0x3ff)))
			continue
		}
		b.WriteString(`\u` + hex16(c))
	}
	b.WriteByte('"')
	return b.String()
}

func hex16(c rune) string {
	return string([]byte{hexDigits[c>>12&0xf], hexDigits[c>>8&0xf], hexDigits[c>>4&0xf], hexDigits[c&0xf]})
}

// TestDecodeObjectIsUnmarshal: random objects in several JSON spellings decode as Unmarshal
// decodes them (and decodeObject takes them, rather than leaving everything to Unmarshal);
// corrupted bodies are either refused or decoded as Unmarshal decodes them.
func TestDecodeObjectIsUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 3))
	accepted := 0
	for range 5000 {
		v := map[string]any{}
		for n := r.IntN(5); n > 0; n-- {
			v[randomString(r)] = randomValue(r, 1)
		}
		for _, data := range jsonVariants(r, v) {
			if checkDecode(t, data) {
				accepted++
			} else if json.Valid(data) {
				var want map[string]any
				if utiljson.Unmarshal(data, &want) == nil && !tooLarge(data) {
					t.Fatalf("%q: decodeObject refused a body Unmarshal reads", data)
				}
			}
			for range 3 { // corrupt a byte: Unmarshal must agree with whatever is accepted
				bad := append([]byte(nil), data...)
				if len(bad) > 0 {
					const corrupt = "{}[]\",:\\ 0-.eE+tfnu\x00\xff"
					bad[r.IntN(len(bad))] = corrupt[r.IntN(len(corrupt))]
				}
				checkDecode(t, bad)
			}
		}
	}
	if accepted < 10000 {
		t.Fatalf("decodeObject took only %d of 15000 valid bodies", accepted)
	}
	for _, s := range []string{
		`{}`, ` {"a" : 1 } `, `{"a":1,"a":2}`, `{"a":-0}`, `{"a":1e2}`, `{"a":1.0}`, `{"a":9223372036854775807}`,
		`{"a":9223372036854775808}`, `{"a":-9223372036854775809}`, `{"a":1e400}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
		`{"a":+1}`, `{"a":-}`, `{"a":1e}`, `{"a":[1,]}`, `{"a":1,}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\ud800"}`,
		`{"a":"\ud800\udc00"}`, `{"a":"\udc00\ud800"}`, `{"a":"\ud800\u0041"}`, `{"a":"\ud800\uZZZZ"}`, `{"a":"\x"}`,
		"{\"a\":\"\x01\"}", "{\"a\":\"\xff\xed\xa0\x80\"}", `{"a":"\u00e9\/\b\f\n\r\t\"\\"}`, `{"a":{}}`, `{"a":[]}`,
		`null`, `[]`, `"x"`, `{"a":1} {}`, `{"a":1}x`, "\ufeff{}", `{"a":[[[[[[[[[[[[1]]]]]]]]]]]]}`,
		`{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	} {
		checkDecode(t, []byte(s))
	}
}

// tooLarge reports whether data holds a number outside float64, which decodeObject leaves to
// Unmarshal (which refuses it too).
func tooLarge(data []byte) bool { return strings.Contains(string(data), "e+") }

// FuzzDecodeObject: whatever decodeObject accepts, Unmarshal decodes the same way.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x",true,null,{"b":-3e-7}]}`, `{"\u00e9\ud83d\ude00":"\\"}`, `{"a":1,"a":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data) })
}

// TestDecodedStringsAreShared checks the table of decoded strings: a string decoded again is
// the very interface value kept the first time, a long one is not kept, and the table starts
// again once full, never holding more than maxStrings.
func TestDecodedStringsAreShared(t *testing.T) {
	var table stringTable
	body := []byte(`{"kind":"Foo","metadata":{"name":"a","annotations":{"long":"` + strings.Repeat("x", maxStringLen+1) + `"}}}`)
	first, ok := decodeObjectWith(body, &table)
	second, ok2 := decodeObjectWith(body, &table)
	if !ok || !ok2 || !reflect.DeepEqual(first, second) {
		t.Fatalf("%v %v\n%#v\n%#v", ok, ok2, first, second)
	}
	same := func(a, b any) bool { // the same boxed string, not merely an equal one
		return (*[2]uintptr)(unsafe.Pointer(&a))[1] == (*[2]uintptr)(unsafe.Pointer(&b))[1]
	}
	if !same(first["kind"], second["kind"]) {
		t.Error("a string decoded again is a new one")
	}
	long := func(m map[string]any) any {
		return m["metadata"].(map[string]any)["annotations"].(map[string]any)["long"]
	}
	if same(long(first), long(second)) {
		t.Error("a string longer than maxStringLen was kept")
	}
	for i := range 3 * maxStrings {
		table.get([]byte(fmt.Sprint(i)))
		if len(table.m) > maxStrings {
			t.Fatalf("%d strings kept, at most %d", len(table.m), maxStrings)
		}
	}
}
