package errkind

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKindWrapsCause(t *testing.T) {
	cause := fmt.Errorf("open x: %w", fs.ErrNotExist)
	err := Wrap(Input, cause)
	require.Equal(t, "open x: file does not exist", err.Error())
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.True(t, Is(err, Input))
	require.False(t, Is(err, Usage))
	require.Equal(t, cause, errors.Unwrap(err))
	require.NoError(t, Wrap(Internal, nil))
}

func TestOfFindsOutermostKind(t *testing.T) {
	inner := New(Internal, "internal error: panic")
	require.Equal(t, Internal, Of(fmt.Errorf("rank 3: %w", inner)))
	require.Equal(t, Usage, Of(Wrap(Usage, inner)))
	require.Equal(t, Unknown, Of(errors.New("plain")))
	require.Equal(t, "usage", Usage.String())
	e := Errorf(Usage, "--workers %d: %w", -1, fs.ErrInvalid)
	require.Equal(t, "--workers -1: invalid argument", e.Error())
	require.ErrorIs(t, e, fs.ErrInvalid)
}

func TestListKeepsEachProblem(t *testing.T) {
	err := List(Input, []string{"a.yaml:1:1: bad", "b.yaml:2:3: worse"})
	require.Equal(t, "a.yaml:1:1: bad\nb.yaml:2:3: worse", err.Error())
	require.Equal(t, []string{"a.yaml:1:1: bad", "b.yaml:2:3: worse"}, Problems(fmt.Errorf("loading: %w", err)))
	require.True(t, Is(err, Input))
	require.Nil(t, Problems(New(Input, "one")))
	require.Nil(t, Problems(errors.New("none")))
}
