package rulefmt

import (
	"reflect"

	"github.com/expr-lang/expr/ast"
)

// Arithmetic in rule expressions is checked (the engine's __div, __mod,
// __finite and __finite_any, internal/rules/finite.go): two patch visitors rewrite
// it inside expr-lang, before type checking. arithTexts records each
// arithmetic operation's text as the rule author wrote it, then checkArith
// rewrites `a / b` into __div(a, b, texts...), `a % b` into __mod(...),
// and wraps a float `+ - * ** ^` into __finite(op, texts...). Operations
// whose operand types are known not to be numbers are left alone, so the
// type checker still reports them at load time.

// arithOps are the operators checkArith rewrites.
var arithOps = map[string]bool{"/": true, "%": true, "+": true, "-": true, "*": true, "**": true, "^": true}

// opText is an arithmetic operation and its operands as written.
type opText struct{ expr, left, right string }

// arithTexts records the text of every arithmetic operation, before any
// patch (fact.NAME still reads fact.NAME).
type arithTexts struct{ texts map[*ast.BinaryNode]opText }

func (r *arithTexts) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BinaryNode)
	if !ok || !arithOps[b.Operator] {
		return
	}
	if isStringLit(b.Left) || isStringLit(b.Right) {
		// text joined to text: checkArith leaves it alone (a string is
		// not a number), and its text, the whole template part, costs
		return
	}
	if _, done := r.texts[b]; !done {
		r.texts[b] = opText{b.String(), b.Left.String(), b.Right.String()}
	}
}

func isStringLit(n ast.Node) bool {
	_, ok := n.(*ast.StringNode)
	return ok
}

// checkArith rewrites arithmetic into checked calls (see above). It runs
// after the fact/threshold patcher, so operand types are known.
type checkArith struct{ texts map[*ast.BinaryNode]opText }

var (
	floatType = reflect.TypeOf(float64(0))
	intType   = reflect.TypeOf(int(0))
)

// numKind classifies a node's type: 'f' float, 'i' integer, '?' unknown
// (decided at run time), 0 anything else.
func numKind(n ast.Node) byte {
	nt := n.Nature()
	switch {
	case nt.IsFloat:
		return 'f'
	case nt.IsInteger:
		return 'i'
	case nt.Type == nil && !nt.Nil, nt.Type != nil && nt.Type.Kind() == reflect.Interface:
		return '?'
	}
	return 0
}

func (p *checkArith) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BinaryNode)
	if !ok {
		return
	}
	t, ok := p.texts[b]
	if !ok {
		return
	}
	l, r := numKind(b.Left), numKind(b.Right)
	if l == 0 || r == 0 {
		return // strings, lists, times: not numbers, or a type error the checker reports
	}
	call := func(fn string, typ reflect.Type, args ...ast.Node) {
		args = append(args, &ast.StringNode{Value: t.expr})
		if len(args) == 3 { // a binary operation: name its operands
			args = append(args, &ast.StringNode{Value: t.left}, &ast.StringNode{Value: t.right})
		}
		c := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: args}
		ast.Patch(node, c)
		if typ != nil {
			c.SetType(typ)
		}
	}
	switch b.Operator {
	case "/":
		call("__div", floatType, b.Left, b.Right)
	case "%":
		if l == 'f' || r == 'f' {
			return // not integers: the checker's error
		}
		call("__mod", intType, b.Left, b.Right)
	default:
		switch {
		case l == 'i' && r == 'i':
			// integers wrap, they never become ±Inf or NaN
		case l == '?' || r == '?':
			call("__finite_any", nil, b)
		default:
			call("__finite", floatType, b)
		}
	}
}
