package rules

import (
	"fmt"
	"math"
	"reflect"
)

// Arithmetic in rule expressions is checked: a division or remainder by
// zero, 0/0, or a float result that overflows to ±Inf or is NaN is an
// evaluation error that names the operation and the operand at fault,
// never a value that makes a comparison true or false by accident
// (+Inf > 0.5). Two patch visitors do it inside expr-lang, before type
// checking: arithTexts records each arithmetic operation's text as the
// rule author wrote it, then checkArith rewrites `a / b` into
// __div(a, b, texts...), `a % b` into __mod(...), and wraps a float
// `+ - * ** ^` into __finite(op, texts...). Operations whose operand types
// are known not to be numbers are left alone, so the type checker still
// reports them at load time.

// nonFiniteError is an evaluation error from checked arithmetic.
type nonFiniteError struct{ msg string }

func (e *nonFiniteError) Error() string { return e.msg }

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int()), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	case rv.CanFloat():
		return rv.Float(), true
	}
	return 0, false
}

// is says ": TEXT is V" for an operand that is not a literal ("" for one).
func is(text string, v float64) string {
	if text == format(v) {
		return ""
	}
	return ": " + text + " is " + format(v)
}

// also says " (TEXT is V)" for an operand that is not a literal.
func also(text string, v float64) string {
	if text == format(v) {
		return ""
	}
	return " (" + text + " is " + format(v) + ")"
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func nonFinite(format string, args ...any) error {
	return &nonFiniteError{fmt.Sprintf(format, args...)}
}

// operands checks both operands are finite numbers.
func operands(a, b any, op, expr, lt, rt string) (x, y float64, err error) {
	x, okx := toFloat(a)
	y, oky := toFloat(b)
	if !okx || !oky {
		return 0, 0, fmt.Errorf("invalid operation %s: %s is %T, %s is %T (expected numbers)", expr, lt, a, rt, b)
	}
	if !finite(x) {
		return 0, 0, nonFinite("%s in %s is %v", lt, expr, x)
	}
	if !finite(y) {
		return 0, 0, nonFinite("%s in %s is %v", rt, expr, y)
	}
	return x, y, nil
}

// checkedDiv is a / b.
func checkedDiv(a, b any, expr, lt, rt string) (float64, error) {
	x, y, err := operands(a, b, "/", expr, lt, rt)
	if err != nil {
		return 0, err
	}
	if y == 0 {
		if x == 0 {
			return 0, nonFinite("0/0 in %s: %s and %s are both 0", expr, lt, rt)
		}
		return 0, nonFinite("division by zero in %s%s%s", expr, is(rt, 0), also(lt, x))
	}
	v := x / y
	if !finite(v) {
		return 0, nonFinite("%s overflows to %v%s%s", expr, v, also(lt, x), also(rt, y))
	}
	return v, nil
}

// checkedMod is a % b on integers.
func checkedMod(a, b any, expr, lt, rt string) (int, error) {
	x, okx := a.(int)
	y, oky := b.(int)
	if !okx || !oky {
		return 0, fmt.Errorf("invalid operation %s: %s is %T, %s is %T (expected integers)", expr, lt, a, rt, b)
	}
	if y == 0 {
		return 0, nonFinite("remainder by zero in %s%s%s", expr, is(rt, 0), also(lt, float64(x)))
	}
	return x % y, nil
}

// checkedFloat checks a float result of + - * ** ^ (its operands are
// finite: each was checked where it was computed).
func checkedFloat(v float64, expr string) (float64, error) {
	switch {
	case math.IsInf(v, 0):
		return 0, nonFinite("%s overflows to %v", expr, v)
	case math.IsNaN(v):
		return 0, nonFinite("%s is NaN (not a real number)", expr)
	}
	return v, nil
}

// checkedAny checks a result whose type is known only at run time:
// non-numbers (string concatenation, lists) pass through.
func checkedAny(v any, expr string) (any, error) {
	if f, ok := v.(float64); ok {
		return checkedFloat(f, expr)
	}
	return v, nil
}
