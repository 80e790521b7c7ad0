package kube

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/informersim/informersim/fakeapi/rest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/jsonpath"
)

// tables is the rest.TableConvertor of this module: the server-side tables of the built-in kinds
// with kube-apiserver's printer columns (printers.go), and of custom resources with their
// definition's additionalPrinterColumns (or kube-apiserver's default Age column), built by
// apiextensions-apiserver's own table convertor, as kube-apiserver builds them. That
// convertor counts ages from the wall clock; the cells of date columns are counted again from
// the fake apiserver's clock, so a simulated run's tables age with its time.
type tables struct {
	defs *definitions
}

func (tb tables) ConvertToTable(ctx context.Context, req *rest.TableRequest) (*metav1.Table, error) {
	if req.Definition == nil {
		return builtinTable(req)
	}
	d, err := tb.defs.get(req.Definition, req.GVK)
	if err != nil {
		return nil, err
	}
	if d.table == nil {
		return nil, nil // columns kube-apiserver could not parse: it falls back to the default
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{}, Items: req.Objects}
	tbl, err := d.table.ConvertToTable(ctx, list, nil)
	if err != nil {
		return nil, err
	}
	if len(tbl.Rows) != len(req.Objects) {
		return nil, fmt.Errorf("kube: a table of %d rows for %d objects", len(tbl.Rows), len(req.Objects))
	}
	for c, p := range d.dateColumns {
		if p == nil {
			continue
		}
		for i := range tbl.Rows {
			tbl.Rows[i].Cells[c+1] = dateCell(p, req.Objects[i].Object, req.Now)
		}
	}
	return tbl, nil
}

// printerColumns are a version's additionalPrinterColumns, or kube-apiserver's default when it
// declares none: the age of the object.
func printerColumns(v *apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(v.AdditionalPrinterColumns) > 0 {
		return v.AdditionalPrinterColumns
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{{
		Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
	}}
}

// compileTable builds the table convertor of columns, and a parsed path for each date column
// (nil for the others).
func compileTable(columns []apiextensionsv1.CustomResourceColumnDefinition) (genericrest.TableConvertor, []*jsonpath.JSONPath) {
	c, err := tableconvertor.New(columns)
	if err != nil {
		return nil, nil
	}
	dates := make([]*jsonpath.JSONPath, len(columns))
	for i, col := range columns {
		if col.Type != "date" {
			continue
		}
		p := jsonpath.New(col.Name)
		p.AllowMissingKeys(true)
		if err := p.Parse("{" + col.JSONPath + "}"); err == nil {
			dates[i] = p
		}
	}
	return c, dates
}

// dateCell is the cell of a date column of obj as kube-apiserver's convertor makes it, the age
// counted from now: nil when the path finds nothing, "<invalid>" for a value that is not a
// timestamp.
func dateCell(p *jsonpath.JSONPath, obj map[string]any, now time.Time) any {
	results, err := p.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	v := results[0][0]
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if !v.IsValid() {
		return nil
	}
	s, ok := v.Interface().(string)
	if !ok {
		return nil
	}
	var ts metav1.Time
	if err := ts.UnmarshalQueryParameter(s); err != nil {
		return "<invalid>"
	}
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// builtinTable is the table of a built-in kind with a printer (printers.go); nil for the others,
// which get the front's default.
func builtinTable(req *rest.TableRequest) (*metav1.Table, error) {
	p, ok := printers[req.GVK]
	if !ok && namedTables[req.GVK.GroupKind()] {
		p = namedTable
	} else if !ok {
		return nil, nil
	}
	tbl := &metav1.Table{ColumnDefinitions: p.columns, Rows: make([]metav1.TableRow, 0, len(req.Objects))}
	for i := range req.Objects {
		cells, err := p.cells(&req.Objects[i], req.Now)
		if err != nil {
			return nil, fmt.Errorf("kube: a %s table row: %w", req.GVK.Kind, err)
		}
		tbl.Rows = append(tbl.Rows, metav1.TableRow{Cells: cells})
	}
	return tbl, nil
}

// namedTables are the built-in kinds kube-apiserver has no printer for: it gives them its
// default table (namedTable), the name and the creation time as a timestamp.
var namedTables = map[schema.GroupKind]bool{
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true,
	{Kind: "LimitRange"}: true,
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}: true,
}

var namedTable = printer{
	columns: []metav1.TableColumnDefinition{nameColumn, {Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}},
	cells: func(obj *unstructured.Unstructured, _ time.Time) ([]any, error) {
		return []any{obj.GetName(), obj.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
	},
}
