package rest

import (
	"encoding/json"
	"sync"
)

// jsonEncoder builds a JSON body in a buffer reused across responses: values are encoding/json's
// encoding, and a LIST's or a watch event's envelope is written around items encoded before
// (encode.go's list, watch.go's event).
type jsonEncoder struct {
	buf []byte
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
	encoders.Put(e)
}

// value appends v's encoding to e.buf, as encoding/json.Marshal writes it.
func (e *jsonEncoder) value(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, b...)
	return nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
