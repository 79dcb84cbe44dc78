// Package errkind is npuprof's one error classification: an error is a
// usage error (the command line or the path the user named), an input
// error (a file npuprof cannot use) or an internal error (a bug: a
// recovered panic, an invalid model), and the command maps the kind to an
// exit code in one place. An *Error wraps its cause and prints exactly the
// cause's message.
package errkind

import (
	"errors"
	"fmt"
)

// Kind is what an error is blamed on.
type Kind int

const (
	// Unknown is an error that carries no kind.
	Unknown Kind = iota
	// Usage: a flag, an argument or the path the user named is wrong.
	Usage
	// Input: a file the user named cannot be used.
	Input
	// Internal: a bug, never blamed on the input.
	Internal
)

func (k Kind) String() string {
	switch k {
	case Usage:
		return "usage"
	case Input:
		return "input"
	case Internal:
		return "internal"
	}
	return "unknown"
}

// Error is an error of a kind; its message is its cause's.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an error of kind k with message msg.
func New(k Kind, msg string) error { return &Error{Kind: k, Err: errors.New(msg)} }

// Errorf returns an error of kind k formatted as fmt.Errorf does (%w wraps).
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Wrap gives err the kind k (nil stays nil).
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// List is one error of kind k for several problems, each reported on a
// line of its own (Problems returns them); its message joins them with
// newlines.
func List(k Kind, problems []string) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = errors.New(p)
	}
	return &Error{Kind: k, Err: errors.Join(errs...)}
}

// Of returns the kind of the outermost *Error in err's chain, Unknown when
// there is none.
func Of(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Unknown
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return Of(err) == k }

// Problems returns the problems of a List error in err's chain, nil when
// err holds none.
func Problems(err error) []string {
	var e *Error
	if !errors.As(err, &e) {
		return nil
	}
	l, ok := e.Err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var out []string
	for _, p := range l.Unwrap() {
		out = append(out, p.Error())
	}
	return out
}
