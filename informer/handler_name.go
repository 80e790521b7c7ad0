package informer

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// handlerName names a handler in its registration's DoneChecker name, as client-go v0.37 does
// (tools/cache event_handler_name.go), so that a "Timed out waiting for ..." message reads the
// same here:
//   - a ResourceEventHandlerFuncs (or a pointer to one) is named after its functions: the
//     common qualifier of their fully qualified names when they share one (typically the
//     function that built them, e.g. "example.com/ctl.NewController"), else the names joined
//     with "+";
//   - any other handler is named after its type, "pkgpath.TypeName", pointers dereferenced;
//   - a nil handler is "<nil>", and anything nameless falls back to %T.
func handlerName(handler ResourceEventHandler) (name string) {
	defer func() {
		if name == "" {
			name = fmt.Sprintf("%T", handler)
		}
	}()
	switch h := handler.(type) {
	case nil:
		return ""
	case ResourceEventHandlerFuncs:
		return nameOfFuncs(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case *ResourceEventHandlerFuncs:
		if h == nil {
			return ""
		}
		return nameOfFuncs(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	}
	v := reflect.ValueOf(handler)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	t := v.Type()
	var b strings.Builder
	if p := t.PkgPath(); p != "" {
		b.WriteString(p + ".")
	}
	b.WriteString(t.Name())
	if t.PkgPath() == "" && t.Name() == "" {
		return ""
	}
	return b.String()
}

// nameOfFuncs is the common qualifier of the non-nil functions' names (their name without the
// last ".element"), or, if they do not share one, all their names joined with "+".
func nameOfFuncs(fs ...any) string {
	var names []string
	qualifier, shared := "", true
	for _, f := range fs {
		v := reflect.ValueOf(f)
		if !v.IsValid() || v.IsNil() {
			continue
		}
		fn := runtime.FuncForPC(v.Pointer())
		if fn == nil || fn.Name() == "" {
			continue
		}
		name := fn.Name()
		names = append(names, name)
		q := name
		if i := strings.LastIndexByte(q, '.'); i > 0 {
			q = q[:i]
		}
		switch qualifier {
		case "":
			qualifier = q
		case q:
		default:
			shared = false
		}
	}
	if shared {
		return qualifier
	}
	return strings.Join(names, "+")
}
