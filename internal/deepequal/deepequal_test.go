package deepequal

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type label string

type leaf struct {
	F32  float32
	F64  float64
	C    complex128
	B    bool
	I8   int8
	U16  uint16
	I32  int32
	U    uint
	S    string
	hid  int // unexported: reflect.DeepEqual compares it too
	Fn   func()
	Ch   chan int
	Z    struct{}
	Arr  [3]int16
	None [0]any
}

type node struct {
	Name     string
	Leaf     leaf
	LeafP    *leaf
	Leaves   []leaf
	Ptrs     []*leaf
	Bytes    []byte
	Labels   map[string]string
	Named    map[label]label
	ByKey    map[string]leaf
	ByInt    map[int]*leaf
	Nested   [][]string
	Children []*node
	Meta     metav1.ObjectMeta
	Time     metav1.Time
	When     time.Time
	Q        resource.Quantity
	Port     intstr.IntOrString
}

// drawer draws a value's content from a stream that can be made to differ from its twin at
// exactly one draw: two values drawn from twins are equal but for that one choice (a number, a
// length, nil or not, a branch).
type drawer struct {
	r       *rand.Rand
	n, diff int
}

func (d *drawer) intN(n int) int {
	v := d.r.IntN(n)
	d.n++
	if d.n == d.diff {
		v = (v + 1) % n
	}
	return v
}

var (
	funcs = []func(){nil, func() {}}
	chans = []chan int{nil, make(chan int), make(chan int)}
	nan   = math.NaN()
)

// fill sets v, of a type of this test, from d.
func (d *drawer) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(d.intN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(d.intN(3)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(d.intN(3)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), 1.5, nan}[d.intN(4)])
	case reflect.Complex128:
		v.SetComplex([]complex128{0, 1i, complex(nan, 0)}[d.intN(3)])
	case reflect.String:
		v.SetString([]string{"", "a", "b", "app"}[d.intN(4)])
	case reflect.Func:
		if f := funcs[d.intN(2)]; f != nil {
			v.Set(reflect.ValueOf(f))
		}
	case reflect.Chan:
		if c := chans[d.intN(3)]; c != nil {
			v.Set(reflect.ValueOf(c))
		}
	case reflect.Pointer:
		if depth > 3 || d.intN(3) == 0 {
			return // nil
		}
		p := reflect.New(v.Type().Elem())
		d.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 3 || d.intN(4) == 0 {
			return // nil
		}
		n := d.intN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			d.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			d.fill(v.Index(i), depth)
		}
	case reflect.Map:
		if depth > 3 || d.intN(4) == 0 {
			return // nil
		}
		m := reflect.MakeMap(v.Type())
		for range d.intN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			d.fill(k, depth+1)
			d.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[time.Time](), reflect.TypeFor[metav1.Time]():
			t := time.Unix(int64(d.intN(3)), 0)
			if d.intN(2) == 1 {
				t = t.UTC()
			}
			if v.Type() == reflect.TypeFor[metav1.Time]() {
				v.Set(reflect.ValueOf(metav1.NewTime(t)))
			} else {
				v.Set(reflect.ValueOf(t))
			}
			return
		case reflect.TypeFor[resource.Quantity]():
			q := resource.MustParse([]string{"1", "100m", "1Gi", "0"}[d.intN(4)])
			if d.intN(2) == 1 {
				_ = q.String() // caches its text: the same amount, another value
			}
			v.Set(reflect.ValueOf(q))
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				d.fill(f, depth)
			} else if v.Type().Field(i).Name == "hid" {
				reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem().SetInt(int64(d.intN(2)))
			}
		}
	case reflect.Interface:
		// metav1's fields of interface type are not in these types; leave nil.
	}
}

func draw(seed uint64, diff int) (*node, int) {
	d := &drawer{r: rand.New(rand.NewPCG(seed, 9)), diff: diff}
	n := new(node)
	d.fill(reflect.ValueOf(n).Elem(), 0)
	return n, d.n
}

// TestEqualIsDeepEqual compares Equal with reflect.DeepEqual on pairs of values drawn alike
// but for one choice (anywhere in the value: a number, a NaN, a length, nil or empty, a map
// entry, a time's location, a Quantity's cached text), and on values with themselves and with
// their parts shared.
func TestEqualIsDeepEqual(t *testing.T) {
	outcomes := map[bool]int{}
	for seed := range uint64(3000) {
		a, draws := draw(seed, -1)
		diff := 1 + int(seed)%max(draws, 1)
		b, _ := draw(seed, diff)
		pairs := [][2]any{{a, b}, {a, a}, {b, a}}
		if seed%7 == 0 {
			c := *a // shares a's slices, maps and pointers: their contents compare as the same
			pairs = append(pairs, [2]any{a, &c})
		}
		for _, p := range pairs {
			want := reflect.DeepEqual(p[0], p[1])
			if got := Equal(p[0], p[1]); got != want {
				t.Fatalf("seed %d (draw %d of %d differs): Equal = %v, reflect.DeepEqual = %v\n%#v\n%#v", seed, diff, draws, got, want, p[0], p[1])
			}
			outcomes[want]++
		}
	}
	if outcomes[true] < 1000 || outcomes[false] < 1000 {
		t.Errorf("too few of one answer to tell: %v", outcomes)
	}
}

type cyclic struct {
	Next *cyclic
	V    int
}

type holder struct {
	Any any
	N   int
}

// TestEqualHandsOver: what the plans do not decide goes to reflect.DeepEqual, with its answer.
func TestEqualHandsOver(t *testing.T) {
	ring := func(v int) *cyclic {
		a := &cyclic{V: 1}
		a.Next = &cyclic{V: v, Next: a}
		return a
	}
	nan := math.NaN()
	deep := func(n int) *cyclic {
		var c *cyclic
		for i := range n {
			c = &cyclic{Next: c, V: i}
		}
		return c
	}
	cases := []struct {
		name string
		a, b any
	}{
		{"a cycle", ring(2), ring(2)},
		{"a cycle differing", ring(2), ring(3)},
		{"deeper than the bound", deep(150), deep(150)},
		{"an interface", &holder{Any: []int{1}}, &holder{Any: []int{1}}},
		{"an interface differing", &holder{Any: 1}, &holder{Any: int64(1)}},
		{"not a pointer", []float64{nan}, []float64{nan}},
		{"nil", nil, (*cyclic)(nil)},
		{"nil pointers", (*cyclic)(nil), (*cyclic)(nil)},
		{"types differ", &cyclic{}, &holder{}},
		{"the same NaN", &[]float64{nan}, &[]float64{nan}},
	}
	for _, c := range cases {
		if got, want := Equal(c.a, c.b), reflect.DeepEqual(c.a, c.b); got != want {
			t.Errorf("%s: Equal = %v, reflect.DeepEqual = %v", c.name, got, want)
		}
	}
	if planOf(reflect.TypeFor[*holder]()) != nil {
		t.Error("a type holding an interface has a plan")
	}
}

func BenchmarkEqual(b *testing.B) {
	var x, y *node
	for seed := uint64(0); x == nil || x.Meta.Labels == nil || len(x.Children) == 0; seed++ {
		x, _ = draw(seed, -1)
		y, _ = draw(seed, -1)
	}
	b.Run("plan", func(b *testing.B) {
		for b.Loop() {
			Equal(x, y)
		}
	})
	b.Run("reflect", func(b *testing.B) {
		for b.Loop() {
			reflect.DeepEqual(x, y)
		}
	})
}

// TestEqualMaps: the cases of maps a drawn pair rarely isolates: nil against empty, a key
// missing against one holding the zero value, the same map, for string maps and others.
func TestEqualMaps(t *testing.T) {
	shared := map[string]leaf{"a": {F64: math.NaN()}}
	cases := []struct {
		name string
		a, b *node
	}{
		{"nil and empty labels", &node{}, &node{Labels: map[string]string{}}},
		{"a key missing", &node{Labels: map[string]string{"a": ""}}, &node{Labels: map[string]string{"b": ""}}},
		{"equal labels", &node{Labels: map[string]string{"a": "x", "b": ""}}, &node{Labels: map[string]string{"b": "", "a": "x"}}},
		{"named strings", &node{Named: map[label]label{"a": "x"}}, &node{Named: map[label]label{"a": "y"}}},
		{"nil and empty structs", &node{ByKey: map[string]leaf{}}, &node{}},
		{"a struct key missing", &node{ByKey: map[string]leaf{"a": {}}}, &node{ByKey: map[string]leaf{"b": {}}}},
		{"the same map of NaN", &node{ByKey: shared}, &node{ByKey: shared}},
		{"two maps of NaN", &node{ByKey: shared}, &node{ByKey: map[string]leaf{"a": {F64: math.NaN()}}}},
		{"pointers", &node{ByInt: map[int]*leaf{1: {S: "a"}}}, &node{ByInt: map[int]*leaf{1: {S: "a"}}}},
		{"nil pointer", &node{ByInt: map[int]*leaf{1: nil}}, &node{ByInt: map[int]*leaf{1: {}}}},
	}
	for _, c := range cases {
		if got, want := Equal(c.a, c.b), reflect.DeepEqual(c.a, c.b); got != want {
			t.Errorf("%s: Equal = %v, reflect.DeepEqual = %v", c.name, got, want)
		}
	}
}
