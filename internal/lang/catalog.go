package lang

import (
	"fmt"
	"io/fs"
	"maps"
	"strconv"
	"strings"
	"sync"
)

// A catalog is a translation table kept as a data file (embedded with
// go:embed beside the code that reads it) rather than as a Go map literal.
// Its format, one entry a line:
//
//	"English text" "its translation"
//
// both Go string literals ("…" with \n, \t and \" escapes, or `…`), apart
// by white space. A line that is blank or starts with # (after white
// space) is a comment. A key given twice is an error, as it is in a map
// literal.

// ParseCatalog is the table of the catalog data; name (the file's) goes
// into its errors, with the line.
func ParseCatalog(name, data string) (map[string]string, error) {
	m := map[string]string{}
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		en, zh, err := catalogEntry(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		if _, dup := m[en]; dup {
			return nil, fmt.Errorf("%s:%d: %q is given twice", name, i+1, en)
		}
		m[en] = zh
	}
	return m, nil
}

// catalogEntry is the two strings of a catalog's line.
func catalogEntry(line string) (en, zh string, err error) {
	var out [2]string
	rest := line
	for k := range out {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil || q[0] == '\'' {
			return "", "", fmt.Errorf("string %d of %q: not a Go string literal", k+1, line)
		}
		if out[k], err = strconv.Unquote(q); err != nil {
			return "", "", err
		}
		rest = strings.TrimLeft(rest[len(q):], " \t")
		if k == 0 && rest != "" && len(rest) == len(line)-len(q) {
			return "", "", fmt.Errorf("%q: no space between the two strings", line)
		}
	}
	if rest != "" {
		return "", "", fmt.Errorf("%q: more after the two strings", line)
	}
	return out[0], out[1], nil
}

// Catalog is ParseCatalog's table of an embedded catalog: a malformed one
// is the program's fault (the packages' tests parse every catalog), so
// it panics.
func Catalog(name, data string) map[string]string {
	m, err := ParseCatalog(name, data)
	if err != nil {
		panic(err)
	}
	return m
}

// CatalogOf is the table of the catalog at path in fsys (a package's
// embedded files), read and parsed on its first use only: a run in
// English never reads it.
func CatalogOf(fsys fs.FS, path string) func() map[string]string {
	return sync.OnceValue(func() map[string]string {
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			panic(err)
		}
		return Catalog(path, string(b))
	})
}

// CheckCatalogs is for a package's tests: every catalog matching pattern
// in fsys parses, has entries and is the table tables names for it (the
// one the code reads), and every table there has its file.
func CheckCatalogs(fsys fs.FS, pattern string, tables map[string]map[string]string) error {
	files, err := fs.Glob(fsys, pattern)
	if err != nil {
		return err
	}
	if len(files) != len(tables) {
		return fmt.Errorf("%s: %d catalogs, %d tables the code reads", pattern, len(files), len(tables))
	}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return err
		}
		m, err := ParseCatalog(f, string(b))
		if err != nil {
			return err
		}
		want, ok := tables[f]
		switch {
		case !ok:
			return fmt.Errorf("%s: no table of the code reads it", f)
		case len(m) == 0:
			return fmt.Errorf("%s: no entries", f)
		case !maps.Equal(m, want):
			return fmt.Errorf("%s: not the table the code reads from it", f)
		}
	}
	return nil
}
