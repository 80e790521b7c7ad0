package rest

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeObject decodes a request body that is one JSON object into the map
// k8s.io/apimachinery/pkg/util/json.Unmarshal would produce: nested objects as
// map[string]any, arrays as []any, integers without a fraction that fit as int64, other numbers
// as float64, the last of duplicate keys winning, invalid UTF-8 and lone surrogates as U+FFFD.
// It reports false for anything else (invalid JSON, a top level that is not an object, nesting
// deeper than maxDecodeDepth, a number out of range), and the caller then asks Unmarshal,
// whose answer and error messages stay the reference. TestDecodeObjectIsUnmarshal and
// FuzzDecodeObject check that every accepted body decodes as Unmarshal decodes it.
//
// Unmarshal validates the whole body, then decodes it by reflection; decoding request bodies
// was the front's largest own cost on writes.
func decodeObject(data []byte) (map[string]any, bool) {
	return decodeObjectWith(data, nil)
}

// decodeObjectWith is decodeObject, taking its short strings from strs, a table of strings
// already decoded (nil for none): request bodies repeat the same keys, kinds, names, managers
// and field paths, and each decoded string was two allocations (its bytes, and its box as an
// interface value). Strings are immutable, so objects may share them.
func decodeObjectWith(data []byte, strs *stringTable) (map[string]any, bool) {
	d := decoder{data: data, strs: strs}
	d.space()
	if d.off >= len(d.data) || d.data[d.off] != '{' {
		return nil, false
	}
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	if d.off != len(d.data) {
		return nil, false
	}
	return v.(map[string]any), true
}

// maxDecodeDepth bounds the nesting decodeObject handles itself (Unmarshal's limit is higher;
// deeper bodies go to it).
const maxDecodeDepth = 200

type decoder struct {
	data []byte
	off  int
	strs *stringTable // nil: every string decoded anew
}

// stringTable is a table of decoded strings, boxed as the interface values a decoded object
// holds, by their text. It is bounded: once full, it starts again empty. It is not safe for
// concurrent use: its user holds a lock around each decoding (Handler.bodyStrings).
type stringTable struct {
	m map[string]any
}

// Bounds of a stringTable: the strings it keeps (at most maxStrings, of at most
// maxStringLen bytes: longer ones are seldom repeated).
const (
	maxStrings   = 4096
	maxStringLen = 64
)

// get returns raw as a string in an interface value, the one kept if there is one.
func (t *stringTable) get(raw []byte) any {
	if len(raw) > maxStringLen {
		return string(raw)
	}
	if v, ok := t.m[string(raw)]; ok { // (a lookup by string(raw) does not allocate)
		return v
	}
	if t.m == nil || len(t.m) >= maxStrings {
		t.m = make(map[string]any, 256)
	}
	s := string(raw)
	v := any(s)
	t.m[s] = v
	return v
}

// space skips JSON whitespace.
func (d *decoder) space() {
	for d.off < len(d.data) {
		switch d.data[d.off] {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return
		}
	}
}

// value decodes the value at d.off (whitespace skipped before it).
func (d *decoder) value(depth int) (any, bool) {
	if d.off >= len(d.data) || depth > maxDecodeDepth {
		return nil, false
	}
	switch c := d.data[d.off]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *decoder) literal(word string) bool {
	if len(d.data)-d.off < len(word) || string(d.data[d.off:d.off+len(word)]) != word {
		return false
	}
	d.off += len(word)
	return true
}

func (d *decoder) object(depth int) (any, bool) {
	d.off++ // {
	m := map[string]any{}
	d.space()
	if d.off < len(d.data) && d.data[d.off] == '}' {
		d.off++
		return m, true
	}
	for {
		if d.off >= len(d.data) || d.data[d.off] != '"' {
			return nil, false
		}
		k, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.off >= len(d.data) || d.data[d.off] != ':' {
			return nil, false
		}
		d.off++
		d.space()
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
		closed, ok := d.separator('}')
		if !ok {
			return nil, false
		}
		if closed {
			return m, true
		}
	}
}

func (d *decoder) array(depth int) (any, bool) {
	d.off++ // [
	l := []any{}
	d.space()
	if d.off < len(d.data) && d.data[d.off] == ']' {
		d.off++
		return l, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		closed, ok := d.separator(']')
		if !ok {
			return nil, false
		}
		if closed {
			return l, true
		}
	}
}

// separator reads what follows an element of an object or array ending in closer: a comma (and
// the spaces after it), or closer, which it reports with closed. ok is false for anything else.
func (d *decoder) separator(closer byte) (closed, ok bool) {
	d.space()
	if d.off >= len(d.data) {
		return false, false
	}
	switch d.data[d.off] {
	case ',':
		d.off++
		d.space()
		return false, true
	case closer:
		d.off++
		return true, true
	}
	return false, false
}

// number decodes a number of JSON's grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?,
// as Unmarshal does for an interface: int64 when it has no fraction point and fits, else
// float64.
func (d *decoder) number() (any, bool) {
	start := d.off
	digits := func() bool {
		n := d.off
		for d.off < len(d.data) && '0' <= d.data[d.off] && d.data[d.off] <= '9' {
			d.off++
		}
		return d.off > n
	}
	if d.data[d.off] == '-' {
		d.off++
	}
	switch {
	case d.off < len(d.data) && d.data[d.off] == '0':
		d.off++
	case !digits():
		return nil, false
	}
	point := false
	if d.off < len(d.data) && d.data[d.off] == '.' {
		point = true
		d.off++
		if !digits() {
			return nil, false
		}
	}
	if d.off < len(d.data) && (d.data[d.off] == 'e' || d.data[d.off] == 'E') {
		d.off++
		if d.off < len(d.data) && (d.data[d.off] == '+' || d.data[d.off] == '-') {
			d.off++
		}
		if !digits() {
			return nil, false
		}
	}
	s := string(d.data[start:d.off])
	if !point { // (ParseInt refuses a fraction anyway, but its error costs an allocation)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// string decodes the string at d.off. A string of printable characters in valid UTF-8
// without escapes (nearly all of them) is one copy; others are unescaped rune by rune.
func (d *decoder) string() (any, bool) {
	d.off++ // "
	start := d.off
	plain := true
	for ; d.off < len(d.data); d.off++ {
		switch c := d.data[d.off]; {
		case c == '"':
			raw := d.data[start:d.off]
			d.off++
			if plain && utf8.Valid(raw) {
				if d.strs != nil {
					return d.strs.get(raw), true
				}
				return string(raw), true
			}
			return unquote(raw)
		case c == '\\':
			plain = false
			d.off++ // the escaped byte cannot end the string; unquote checks it
		case c < ' ':
			return nil, false // control characters must be escaped
		}
	}
	return nil, false
}

// unquote decodes the content of a string with escapes or invalid UTF-8: the escapes of JSON,
// a \u surrogate pair as one rune, a lone surrogate and each invalid byte as U+FFFD.
func unquote(raw []byte) (any, bool) {
	b := make([]byte, 0, len(raw)+2*utf8.UTFMax)
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(raw[i:])
			b = utf8.AppendRune(b, r) // RuneError for an invalid byte
			i += size
			continue
		}
		if i+1 >= len(raw) {
			return nil, false
		}
		switch e := raw[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(raw[i+2:])
			if !ok {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw[min(i+2, len(raw)):]); ok && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						b = utf8.AppendRune(b, pair)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return string(b), true
}

// hex4 reads the four hexadecimal digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
