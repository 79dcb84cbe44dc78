package render

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// SARIF artifact locations are URI references that a consumer resolves:
// every path must come back as itself. A relative path whose first
// segment holds a colon ("run:42/profiles", as timestamps and host:port
// names often do) read as a URI with scheme "run"; it now starts with
// "./" (RFC 3986 §4.2).
func TestFileURIRoundTrips(t *testing.T) {
	for _, c := range []struct{ path, uri string }{
		{"profiles/run 1#2?%", "profiles/run%201%232%3F%25"},
		{"/abs/prof", "file:///abs/prof"},
		{"run:42/profiles", "./run:42/profiles"},
		{"10.0.0.1:8000", "./10.0.0.1:8000"},
		{"../up/x", "../up/x"},
	} {
		got := fileURI(c.path)
		require.Equal(t, c.uri, got, c.path)
		u, err := url.Parse(got)
		require.NoError(t, err, c.path)
		if u.Scheme == "file" {
			require.Equal(t, c.path, u.Path)
			continue
		}
		require.Empty(t, u.Scheme, "%s: a relative path has no scheme", c.path)
		p, err := url.PathUnescape(u.EscapedPath())
		require.NoError(t, err)
		require.Contains(t, []string{c.path, "./" + c.path}, p)
	}
}
