package rest

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/informersim/informersim/internal/fastpath"
)

// jsonEncoder writes JSON-like values (what unstructured objects hold: nil, string, bool,
// int64, float64, map[string]any, []any) without reflection, producing exactly the bytes
// encoding/json.Marshal produces for them: map keys sorted bytewise, HTML characters and
// U+2028/U+2029 escaped, invalid UTF-8 replaced by U+FFFD, floats in encoding/json's
// format, NaN and infinities refused. Any other type is handed to encoding/json, so the
// output is Marshal's for every value (TestEncoderIsMarshal checks it on random values).
//
// encoding/json reflects over every map entry and allocates a sorted key slice per map;
// serialising objects was the largest cost of the front after client-go's own decoding
// (LIST of many objects, one encoding per watch event and per write).
type jsonEncoder struct {
	buf  []byte
	keys []string // a stack of map keys being sorted: each map uses the part above its parent's
}

// encoders reuses encoders and their buffers across responses: a LIST of thousands of
// objects otherwise allocates, zeroes and regrows a buffer of megabytes for every request.
// The buffer never leaves the handler (ResponseWriter.Write must not retain it).
var encoders = sync.Pool{New: func() any { return new(jsonEncoder) }}

// maxPooledBuffer bounds the buffers kept for reuse, so one huge response is not kept alive.
const maxPooledBuffer = 32 << 20

// handOverBuffer: a JSON list body longer than this is handed to the response (handOver) rather
// than copied out of the pooled buffer.
const handOverBuffer = 1 << 20

func getEncoder() *jsonEncoder { return encoders.Get().(*jsonEncoder) }

func putEncoder(e *jsonEncoder) {
	if cap(e.buf) > maxPooledBuffer {
		return
	}
	e.buf = e.buf[:0]
	clear(e.keys[:cap(e.keys)]) // drop references to the last response's keys
	e.keys = e.keys[:0]
	encoders.Put(e)
}

// value appends v's encoding to e.buf.
func (e *jsonEncoder) value(v any) error {
	if !fastpath.Use(fastpath.JSONEncoder) {
		return e.marshal(v)
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = appendJSONString(e.buf, x)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case float64:
		return e.float(x)
	case map[string]any:
		return e.object(x)
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, item := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(item); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, raw...)
	}
	return nil
}

// object appends a map with its keys in encoding/json's order (sorted bytewise).
func (e *jsonEncoder) object(m map[string]any) error {
	if !fastpath.Use(fastpath.JSONEncoder) {
		return e.marshal(m)
	}
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys[base:])
	e.buf = append(e.buf, '{')
	// Index e.keys on each turn: nested maps push onto the stack and may move it.
	for i := base; i < base+len(m); i++ {
		if i > base {
			e.buf = append(e.buf, ',')
		}
		k := e.keys[i]
		e.buf = appendJSONString(e.buf, k)
		e.buf = append(e.buf, ':')
		if err := e.value(m[k]); err != nil {
			e.keys = e.keys[:base]
			return err
		}
	}
	e.buf = append(e.buf, '}')
	e.keys = e.keys[:base]
	return nil
}

// float appends f as encoding/json does: the shortest representation that reads back as f,
// in exponent form below 1e-6 or from 1e21 on (with a one-digit negative exponent written
// without its leading zero), and an error for NaN and the infinities, which JSON lacks.
func (e *jsonEncoder) float(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// encoding/json's own error, so that the message is the same.
		return &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(e.buf)
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, 64)
	if format == 'e' {
		// e-07 becomes e-7, as in encoding/json (ES6 number formatting).
		if b := e.buf[start:]; len(b) >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			e.buf = e.buf[:len(e.buf)-1]
		}
	}
	return nil
}

// jsonSafe[c] is true for the ASCII bytes a JSON string holds as they are in encoding/json's
// HTML-safe output: not a control character, quote, backslash, <, > or &.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		safe[c] = true
	}
	for _, c := range `"\<>&` {
		safe[c] = false
	}
	return safe
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string with encoding/json.Marshal's escaping.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // s[start:i] is pending, to be copied as it is
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters and <, >, &
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029': // line separators, which break JSONP
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// marshal appends encoding/json.Marshal's encoding of v: the whole of a plain build's encoder
// (internal/fastpath).
func (e *jsonEncoder) marshal(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, b...)
	return nil
}
