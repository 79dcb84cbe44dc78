// Package codepatch turns a rule's code change into a unified diff of the
// user's source tree (--source DIR: a vllm-ascend checkout or the installed
// vllm_ascend package folder). It only reads DIR.
package codepatch

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/results"
)

// Make returns the patch of spec against dir: within spec.Scope
// ("Class.method" of spec.File, or of one of the paths spec.Moved names
// when the tree keeps the file there), every keyword argument or
// assignment `NAME=...` / `NAME = ...` of a name in spec.Set gets the
// given value; a keyword argument that passes on a name the patch sets
// (`NAME=NAME`) is left as it is. An error says which of the file, the
// scope or a name was not found, and the first release the patch is for
// (spec.Since) when the rule names it.
func Make(dir string, spec fix.PatchSpec) (results.CodePatch, error) {
	cp, err := make1(dir, spec)
	if _, done := err.(alreadySet); err != nil && !done && spec.Since != "" {
		err = fmt.Errorf("%v (the patch is for vLLM-Ascend %s and later: an older tree does not have this code)", err, spec.Since)
	}
	return cp, err
}

func make1(dir string, spec fix.PatchSpec) (results.CodePatch, error) {
	files, tried := find(dir, spec)
	if len(files) == 0 {
		return results.CodePatch{}, fmt.Errorf("%s not found under %s (tried %s)", filepath.Base(spec.File), dir, strings.Join(tried, ", "))
	}
	var first error
	for _, f := range files {
		cp, err := patchFile(f.rel, f.text, spec)
		if err == nil {
			return cp, nil
		}
		if first == nil {
			first = err
		}
	}
	return results.CodePatch{}, first
}

// patchFile is the patch of one file's text, rel its path under --source.
func patchFile(rel, text string, spec fix.PatchSpec) (results.CodePatch, error) {
	lines := strings.SplitAfter(text, "\n")
	lo, hi, err := scope(lines, spec.Scope)
	if err != nil {
		return results.CodePatch{}, fmt.Errorf("%s: %v", rel, err)
	}
	for _, name := range spec.Names() {
		re := regexp.MustCompile(`(\b` + regexp.QuoteMeta(name) + `\s*=\s*)([^,)\s#]+)`)
		n := 0
		for i := lo; i < hi; i++ {
			m := re.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			if _, fwd := spec.Set[m[2]]; fwd {
				// group_list_type=group_list_type: passes on the local
				// the patch sets
				continue
			}
			lines[i] = re.ReplaceAllString(lines[i], "${1}"+spec.Set[name])
			if c, ok := spec.Comments[name]; ok {
				lines[i] = withComment(lines[i], c)
			}
			n++
		}
		if n == 0 {
			return results.CodePatch{}, fmt.Errorf("%s: no %s= in %s", rel, name, spec.Scope)
		}
	}
	d, err := deploy.UnifiedDiffNamed(rel, text, strings.Join(lines, ""))
	if err != nil {
		return results.CodePatch{}, err
	}
	if d == "" {
		return results.CodePatch{}, alreadySet(fmt.Sprintf("%s: %s already sets %s", rel, spec.Scope, strings.Join(spec.Names(), ", ")))
	}
	return results.CodePatch{File: rel, Diff: d}, nil
}

// withComment is line with its trailing Python comment (a '#' outside a
// string literal) replaced by "# c"; a line without one is returned as
// it is (the patch adds no comments of its own).
func withComment(line, c string) string {
	body := strings.TrimRight(line, "\r\n")
	eol := line[len(body):]
	var quote byte
	cut := -1
	for i := 0; i < len(body); i++ {
		switch ch := body[i]; {
		case quote != 0 && ch == '\\':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '#':
			cut = i
			i = len(body)
		}
	}
	if cut < 0 {
		return line
	}
	return strings.TrimRight(body[:cut], " \t") + "  # " + c + eol
}

// alreadySet is the error of a tree that has the patch's values already.
type alreadySet string

func (e alreadySet) Error() string { return string(e) }

type srcFile struct{ rel, text string }

// find reads the patch's file under dir, at spec.File and then at each of
// spec.Moved: dir is a checkout (dir/vllm_ascend/...) or the package
// folder itself (dir/ops/...). It returns the files found, each with the
// path the diff names (relative to dir), and the paths it tried.
func find(dir string, spec fix.PatchSpec) (found []srcFile, tried []string) {
	paths := []string{spec.File}
	for _, m := range spec.Moved {
		paths = append(paths, m.File)
	}
	for _, file := range paths {
		cands := []string{file}
		if i := strings.IndexByte(file, '/'); i > 0 {
			cands = append(cands, file[i+1:])
		}
		for _, rel := range cands {
			tried = append(tried, rel)
			// under the rule of internal/infile: a regular file of --source,
			// its links inside it, 16 MiB at most
			b, err := infile.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)), infile.SourceFile, infile.Opts{Root: dir})
			if err == nil {
				found = append(found, srcFile{rel, string(b)})
				break
			}
		}
	}
	return found, tried
}

// scope returns the lines [lo, hi) of "Class.method": the method's body
// inside the class, up to the next line indented no deeper than its def.
func scope(lines []string, sc string) (int, int, error) {
	cls, meth, _ := strings.Cut(sc, ".")
	c := indexOf(lines, 0, len(lines), regexp.MustCompile(`^(\s*)class\s+`+regexp.QuoteMeta(cls)+`\b`))
	if c < 0 {
		return 0, 0, fmt.Errorf("no class %s", cls)
	}
	end := blockEnd(lines, c)
	if meth == "" {
		return c, end, nil
	}
	m := indexOf(lines, c+1, end, regexp.MustCompile(`^(\s*)(async\s+)?def\s+`+regexp.QuoteMeta(meth)+`\b`))
	if m < 0 {
		return 0, 0, fmt.Errorf("no method %s in class %s", meth, cls)
	}
	return m, blockEnd(lines, m), nil
}

// headerEnd is the last line of the header (a def's or class's signature)
// that starts at line i: a signature may span lines, as ruff formats one
// argument a line and closes with "):" (or ") -> T:") at the def's own
// indentation, which must not end the block. It follows the brackets,
// skipping string literals and comments, to the line where they close.
func headerEnd(lines []string, i int) int {
	depth := 0
	for j := i; j < len(lines); j++ {
		line := lines[j]
		for k := 0; k < len(line); k++ {
			switch c := line[k]; c {
			case '#':
				k = len(line)
			case '\'', '"':
				// a one-line string literal (a default value): skip to its end
				for k++; k < len(line) && line[k] != c; k++ {
					if line[k] == '\\' {
						k++
					}
				}
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			}
		}
		if depth <= 0 {
			return j
		}
	}
	return i
}

func indexOf(lines []string, lo, hi int, re *regexp.Regexp) int {
	for i := lo; i < hi; i++ {
		if re.MatchString(lines[i]) {
			return i
		}
	}
	return -1
}

// blockEnd is the first line after the block whose header starts at line
// i: past the header's last line (headerEnd), a non-blank line indented no
// deeper than line i.
func blockEnd(lines []string, i int) int {
	ind := indent(lines[i])
	for j := headerEnd(lines, i) + 1; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) != "" && indent(lines[j]) <= ind {
			return j
		}
	}
	return len(lines)
}

func indent(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// reSCMVersion is the version line setuptools-scm writes into
// vllm_ascend/_version.py ("__version__ = version = '0.13.0rc2'", or
// "version = '...'" in its older template).
var reSCMVersion = regexp.MustCompile(`(?m)^(?:__version__\s*=\s*)?version\s*=\s*['"]([^'"\n]+)['"]`)

// TreeVersion is the vLLM-Ascend version of the tree at dir as its
// _version.py says (vllm-ascend's setup.py has setuptools-scm write
// vllm_ascend/_version.py when the package is built or installed; a plain
// checkout has none): the version as written ("0.13.0rc2") and the file,
// relative to dir. "", "" when the tree has no such file; an error when
// the file does not say a version.
func TreeVersion(dir string) (version, file string, err error) {
	for _, rel := range []string{"vllm_ascend/_version.py", "_version.py"} {
		b, rerr := infile.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)), infile.SourceFile, infile.Opts{Root: dir})
		if rerr != nil {
			continue
		}
		m := reSCMVersion.FindSubmatch(b)
		if m == nil {
			return "", rel, fmt.Errorf("%s: no version = '...' line", rel)
		}
		return strings.TrimSpace(string(m[1])), rel, nil
	}
	return "", "", nil
}
