package lang

import "reflect"

// TranslateStrings translates, in place, every string that v (a pointer)
// holds through its fields, slices, arrays, pointers and map values (never
// a map key: keys are names) into language l by the phrase table
// (Translate), skipping the struct fields named in skip (a patch to apply,
// a diff) and whatever they hold. A name, a number or a path matches no
// phrase and stays; English does nothing.
func TranslateStrings(l string, v any, skip map[string]bool) {
	if l != ZH {
		return
	}
	MapStrings(v, skip, func(s string) string { return Translate(l, s) })
}

// MapStrings replaces, in place, every string s that v (a pointer) holds
// as TranslateStrings walks them by f(s).
func MapStrings(v any, skip map[string]bool, f func(string) string) {
	translateValue(f, reflect.ValueOf(v), skip, 0)
}

func translateValue(l func(string) string, v reflect.Value, skip map[string]bool, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface && e.Kind() == reflect.String {
				if v.CanSet() {
					if z := l(e.String()); z != e.String() {
						v.Set(reflect.ValueOf(z))
					}
				}
				return
			}
			translateValue(l, e, skip, depth+1)
		}
	case reflect.String:
		if v.CanSet() {
			if z := l(v.String()); z != v.String() {
				v.SetString(z)
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && !skip[f.Name] {
				translateValue(l, v.Field(i), skip, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			translateValue(l, v.Index(i), skip, depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !hasText(v.Type().Elem(), 0) {
			return
		}
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			translateValue(l, e, skip, depth+1)
			v.SetMapIndex(it.Key(), e)
		}
	}
}

// hasText reports whether a value of type t can hold a string (a map of
// numbers is skipped whole).
func hasText(t reflect.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return hasText(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasText(t.Field(i).Type, depth+1) {
				return true
			}
		}
	}
	return false
}
