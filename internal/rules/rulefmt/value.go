package rulefmt

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Format renders a value as a template prints it ({{ expression }}):
// numbers without trailing zeros (3 decimals at most), lists as 1,2,4.
func Format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		s := strconv.FormatFloat(x, 'f', 3, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return s
	case []int:
		s, _ := JoinInts(x, ",") // []int always joins
		return s
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Format(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// JoinInts joins a list of integers: []int (facts, ranks) or the []any
// of numbers a list literal or filter() makes (whole floats allowed).
func JoinInts(list any, sep string) (string, error) {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", fmt.Errorf("join_ints: expected a list of integers, found %T", list)
	}
	parts := make([]string, v.Len())
	for i := range parts {
		e := v.Index(i)
		if e.Kind() == reflect.Interface {
			e = e.Elem()
		}
		switch {
		case e.CanInt():
			parts[i] = strconv.FormatInt(e.Int(), 10)
		case e.CanUint():
			parts[i] = strconv.FormatUint(e.Uint(), 10)
		case e.CanFloat() && e.Float() == math.Trunc(e.Float()) && !math.IsInf(e.Float(), 0):
			parts[i] = strconv.FormatFloat(e.Float(), 'f', -1, 64)
		default:
			return "", fmt.Errorf("join_ints: element %d is not an integer (%v)", i, e)
		}
	}
	return strings.Join(parts, sep), nil
}
