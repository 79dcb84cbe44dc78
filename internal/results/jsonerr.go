package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// jsonProblem says in plain words what is wrong with data, which
// encoding/json refused with err: where the text stops being JSON, that it
// ends early, or which field holds the wrong kind of value; never Go's own
// wording ("invalid character 'm' looking for beginning of value", "Go
// struct field").
func jsonProblem(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end"):
		return fmt.Sprintf("the JSON ends early, after %d byte(s) (the file may be cut short)", len(data))
	case errors.As(err, &syn):
		at := min(max(syn.Offset-1, 0), int64(len(data)))
		line := 1 + bytes.Count(data[:at], []byte("\n"))
		col := int(at) - bytes.LastIndexByte(data[:at], '\n')
		what := "the text"
		if at < int64(len(data)) {
			what = fmt.Sprintf("%q", data[at])
		}
		return fmt.Sprintf("not JSON: line %d, column %d: unexpected %s", line, col, what)
	case errors.As(err, &typ):
		where := "the document"
		if typ.Field != "" {
			where = fmt.Sprintf("field %q", typ.Field)
		}
		return fmt.Sprintf("%s holds a JSON %s, expected %s", where, typ.Value, jsonKind(typ.Type))
	}
	return err.Error()
}

// jsonKind names the JSON value a Go type is read from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a number"
}
