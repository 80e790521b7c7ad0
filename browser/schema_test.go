package browser

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/informersim/informersim/scenarios"
	rec "github.com/informersim/informersim/timeline/record"
)

const schemaFile = "../docs/run.schema.json"

func compileSchema(t *testing.T, ref string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(schemaFile + ref)
	if err != nil {
		t.Fatalf("compile %s%s: %v", schemaFile, ref, err)
	}
	return s
}

// instance is the record as JSON Schema reads it (numbers kept exact).
func instance(t *testing.T, r *rec.Run) any {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Goal: the record of every course file, and of a failing run, validates against
// docs/run.schema.json as a whole, and each of its events on its own; the schema is not
// vacuous: a record with a mistyped field, an unknown member or a missing one is refused.
func TestRecordsMatchSchema(t *testing.T) {
	doc := compileSchema(t, "")
	event := compileSchema(t, "#/$defs/event")
	runs := []scenarios.Scenario{failing(t), failingAtDelivery(t)}
	runs = append(runs, scenarios.Course()...)
	events := 0
	for _, sc := range runs {
		r, _ := record(t, sc)
		inst := instance(t, r)
		if err := doc.Validate(inst); err != nil {
			t.Errorf("%s: the record does not match the schema: %v", sc.Name, err)
		}
		for i, e := range inst.(map[string]any)["events"].([]any) {
			if err := event.Validate(e); err != nil {
				t.Errorf("%s: event %d: %v", sc.Name, i, err)
			}
			events++
		}
	}
	t.Logf("%d records, %d events validated", len(runs), events)

	r, _ := record(t, lesson(t, "05"))
	for name, spoil := range map[string]func(m map[string]any){
		"an rv that is text": func(m map[string]any) {
			m["events"].([]any)[0].(map[string]any)["fields"].(map[string]any)["rv"] = "two"
		},
		"an unknown member of an event": func(m map[string]any) { m["events"].([]any)[1].(map[string]any)["colour"] = "red" },
		"no trace hash":                 func(m map[string]any) { delete(m["trace"].(map[string]any), "hash") },
		"a lane's unknown role":         func(m map[string]any) { m["components"].([]any)[0].(map[string]any)["role"] = "cloud" },
	} {
		inst := instance(t, r).(map[string]any)
		spoil(inst)
		if err := doc.Validate(inst); err == nil {
			t.Errorf("a record with %s validates", name)
		}
	}
}

// Goal: the JSON the page embeds is the record --json prints, byte for byte.
func TestPageEmbedsRecord(t *testing.T) {
	r, _ := record(t, lesson(t, "05"))
	var page, js bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(page.String(), `<script id="run-data" type="application/json">`)
	embedded, _, ok := strings.Cut(rest, "</script>")
	if !ok {
		t.Fatal("the page embeds no record")
	}
	var a, b any
	if err := json.Unmarshal([]byte(embedded), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Error("the page's record differs from --json's")
	}
}
