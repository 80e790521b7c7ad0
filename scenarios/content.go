package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// parseContent reads an object's content (its top-level fields besides apiVersion, kind and
// metadata) as JSON, in unstructured's value types: numbers become int64 when integral, else
// float64.
func parseContent(s string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return fixNumbers(m).(map[string]any), nil
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
		return x
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// formatContent writes content as compact JSON with sorted keys (encoding/json sorts map keys).
func formatContent(m map[string]any) string {
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}
