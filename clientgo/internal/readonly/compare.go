package readonly

import "reflect"

// Compare reports whether obj is reflect.DeepEqual to its copy cp, and returns the snapshot to
// pass as last to the next comparison of the pair (nil when they differ). last is the one the
// previous comparison returned, or nil for the first.
//
// An object whose memory still holds last's bytes is unchanged. Any other is compared with its
// copy as DeepEqual would: by Verified's walk, or by reflect.DeepEqual itself where that cannot
// tell (a type reaching floats or functions, a graph deeper than the walk goes, a difference),
// and snapshotted again when equal.
func Compare(obj, cp any, last *Snapshot) (equal bool, next *Snapshot) {
	if last != nil && last.Unchanged() {
		return true, last
	}
	if s := Verified(obj, cp); s != nil {
		return true, s
	}
	if reflect.DeepEqual(obj, cp) {
		return true, Of(obj, cp)
	}
	return false, nil
}

// ChangedFields names the top-level fields of two objects of one struct type (or pointers to
// it) that differ (ObjectMeta, Spec, Status...), or "contents" when they are not structs or no
// field differs.
func ChangedFields(was, now any) []string {
	a, b := reflect.ValueOf(was), reflect.ValueOf(now)
	if a.Kind() == reflect.Pointer && b.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil() {
		a, b = a.Elem(), b.Elem()
	}
	if a.Kind() != reflect.Struct || a.Type() != b.Type() {
		return []string{"contents"}
	}
	var out []string
	for i := range a.NumField() {
		if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			out = append(out, a.Type().Field(i).Name)
		}
	}
	if len(out) == 0 {
		return []string{"contents"}
	}
	return out
}
