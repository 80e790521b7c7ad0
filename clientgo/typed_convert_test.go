package clientgo

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/informersim/informersim/clientgo/internal/testobjects"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
)

// Goal: the informer's typed conversion may take the apiserver's objects lent
// (typed.readsOnly) because the typed object it builds shares no memory with them: after every
// map entry, slice element, pointed-to value and scalar of the typed Deployment is overwritten,
// the unstructured object is as it was. A type that holds interface values does share (what the
// converter puts in an interface is the unstructured value itself): the same overwriting
// changes its unstructured object, so holdsInterfaces must say so, and such types keep copies.
func TestTypedConversionSharesNothing(t *testing.T) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(testobjects.RichDeployment())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	before := u.DeepCopy()
	conv := &typed{scheme: kubescheme.Scheme, gvk: appsv1.SchemeGroupVersion.WithKind("Deployment")}
	if !conv.readsOnly() {
		t.Fatal("the conversion to a Deployment is not taken as read-only")
	}
	out, err := conv.transform(u)
	if err != nil {
		t.Fatal(err)
	}
	if n := overwrite(reflect.ValueOf(out)); n < 40 {
		t.Fatalf("only %d values of the typed Deployment overwritten", n)
	}
	if !reflect.DeepEqual(u.Object, before.Object) {
		t.Fatalf("overwriting the typed Deployment changed the object it was converted from:\n%v\nwas\n%v", u.Object, before.Object)
	}

	// A type with an interface in it.
	type withExtra struct {
		metav1.ObjectMeta `json:"metadata"`
		Extra             map[string]any `json:"extra"`
	}
	for typ, want := range map[reflect.Type]bool{reflect.TypeFor[withExtra](): true, reflect.TypeFor[*runtime.RawExtension](): true,
		reflect.TypeFor[[]map[string]*withExtra](): true, reflect.TypeFor[corev1.ConfigMap](): false, reflect.TypeFor[corev1.Pod](): false} {
		if got := holdsInterfaces(typ); got != want {
			t.Errorf("holdsInterfaces(%v) = %v, want %v", typ, got, want)
		}
	}
	src := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}, "extra": map[string]any{"nested": map[string]any{"k": "v"}}}}
	before = src.DeepCopy()
	var x withExtra
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(src.Object, &x); err != nil {
		t.Fatal(err)
	}
	overwrite(reflect.ValueOf(&x))
	if reflect.DeepEqual(src.Object, before.Object) {
		t.Fatal("overwriting a converted map[string]any left its source as it was: the overwriting cannot see sharing")
	}
}

// overwrite writes a new value into everything v reaches that a controller could write: map
// entries (a map inside an interface in place, since that is what a converter would share),
// slice elements, pointed-to values, exported fields, scalars. It returns how many values it
// wrote.
func overwrite(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		if e := v.Elem(); v.Kind() == reflect.Pointer || e.Kind() == reflect.Map || e.Kind() == reflect.Slice || e.Kind() == reflect.Pointer {
			return overwrite(e)
		}
		v.Set(reflect.ValueOf("overwritten"))
		return 1
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += overwrite(v.Field(i))
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += overwrite(v.Index(i))
		}
		return n
	case reflect.Map:
		n := 0
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Interface && !e.IsNil() && (e.Elem().Kind() == reflect.Map || e.Elem().Kind() == reflect.Slice) {
				n += overwrite(e.Elem())
				continue
			}
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			n += overwrite(c)
			v.SetMapIndex(k, c)
		}
		return n
	case reflect.String:
		v.SetString("overwritten")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	default:
		panic(fmt.Sprintf("overwrite: a %s", v.Type()))
	}
	return 1
}
