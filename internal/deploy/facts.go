package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/vllmconf"
)

// Fact is one thing the script says about the deployment. Names are the
// fact names of docs/rules.md.
type Fact struct {
	Name   string
	Value  any // int, bool, string or []int
	Source string
}

// DefaultCaptureSizes is vLLM-Ascend v0.13's default capture-size list for
// a max_num_seqs (vllm-ascend.md §4): [1,2,4] then multiples of 8 up to
// min(max_num_seqs, 512) (step 16 above 256).
func DefaultCaptureSizes(maxNumSeqs int) []int {
	top := min(maxNumSeqs, 512)
	var out []int
	for _, v := range []int{1, 2, 4} {
		if v <= top {
			out = append(out, v)
		}
	}
	for v := 8; v <= top; {
		out = append(out, v)
		if v >= 256 {
			v += 16
		} else {
			v += 8
		}
	}
	return out
}

// CUDAGraphModes are the values of vLLM's compilation_config
// cudagraph_mode (vllmconf.CUDAGraphModes).
var CUDAGraphModes = vllmconf.CUDAGraphModes

// CUDAGraphMode returns the CUDAGraphMode name v spells (any case, as vLLM
// reads it) and whether it is one.
func CUDAGraphMode(v string) (string, bool) { return vllmconf.CUDAGraphMode(v) }

// Facts returns what the script says, each with its line. Values vLLM
// would refuse are left out (see FactsChecked).
func (s *Script) Facts() []Fact {
	f, _ := s.FactsChecked()
	return f
}

// FactsChecked returns what the script says, each with its line, and
// apart the facts whose value is invalid (an unknown cudagraph_mode): their
// Value is the text as written and Source its file:line; the caller warns
// about them and treats the fact as unknown. A value only running the
// script gives (a command substitution) is no fact: Unread says so.
func (s *Script) FactsChecked() (facts, invalid []Fact) {
	fs := &factSet{s: s}
	fs.env()
	fs.versions()
	if s.Serve != nil {
		fs.serve(s.withVarFlags(s.Serve))
	}
	return fs.out, fs.invalid
}

// factSet collects the facts of a script.
type factSet struct {
	s            *Script
	out, invalid []Fact
}

func (fs *factSet) source(line int, how string) string {
	return fmt.Sprintf("%s:%d (%s)", fs.s.Path, line, how)
}

func (fs *factSet) add(name string, v any, line int, how string) {
	fs.out = append(fs.out, Fact{Name: name, Value: v, Source: fs.source(line, how)})
}

// versions adds the versions the script states: the first line that
// states each (pip pins and lists, image tags, CANN toolkit names).
func (fs *factSet) versions() {
	seenVer := map[string]bool{}
	pipShow := ""
	for i, l := range fs.s.Lines {
		var vs []vllmconf.Version
		vs, pipShow = vllmconf.VersionsIn(l, pipShow)
		for _, v := range vs {
			if !seenVer[v.Fact] {
				seenVer[v.Fact] = true
				fs.add(v.Fact, v.Value, i+1, v.How)
			}
		}
	}
}

// env adds env.NAME for each known variable, and flashcomm1 from it.
func (fs *factSet) env() {
	s := fs.s
	for _, n := range slices.Sorted(maps.Keys(s.Env)) {
		if a := s.Env[n]; a.unknown == "" {
			fs.add("env."+n, a.Value, a.Line, "export")
		}
	}
	for _, n := range []string{"VLLM_ASCEND_ENABLE_FLASHCOMM1", "VLLM_ASCEND_ENABLE_FLASHCOMM"} {
		if a := s.Env[n]; a != nil {
			if a.unknown == "" {
				fs.add("flashcomm1", truthy(a.Value), a.Line, n+"="+a.Value)
			}
			return
		}
	}
}

// serve adds the facts of the command's flags.
func (fs *factSet) serve(c *Command) {
	s := fs.s
	if m, ok := s.expand(c.Model); ok && m != "" && (c.model == nil || c.model.unknown == "") {
		fs.add("model", m, c.FirstLine, "vllm serve")
	}
	fs.intFlag(c, "--tensor-parallel-size", "tp")
	fs.intFlag(c, "--data-parallel-size", "dp")
	maxSeqs, haveMax := fs.intFlag(c, "--max-num-seqs", "max_num_seqs")
	// a word whose flags are unread may hold any flag: no flag is known
	// to be absent then
	hidden := len(c.opaque) > 0
	for _, t := range c.vars {
		if _, ok := s.expand(t.text); !ok {
			hidden = true
		}
	}
	boolFlag := func(flag, fact string) {
		if f := c.Lookup(flag); f != nil {
			fs.add(fact, true, f.Line, flag)
		} else if !hidden {
			fs.add(fact, false, c.FirstLine, flag+" absent")
		}
	}
	if f := c.Lookup("--quantization"); f != nil && f.HasValue {
		if v, ok := s.expand(f.Value); ok && v != "" {
			fs.add("quantization", v, f.Line, "--quantization "+f.Value)
		}
	}
	boolFlag("--enable-expert-parallel", "expert_parallel")
	boolFlag("--async-scheduling", "async_scheduling")
	// Prefix caching is on by default in vLLM V1 and off in V0: only an
	// explicit flag says which.
	if f := c.Lookup("--no-enable-prefix-caching"); f != nil {
		fs.add("prefix_caching", false, f.Line, f.Name)
	} else if f := c.Lookup("--enable-prefix-caching"); f != nil {
		fs.add("prefix_caching", true, f.Line, f.Name)
	}
	sizesSet := fs.compilation(c)
	if f := c.Lookup("--enforce-eager"); f != nil {
		fs.add("cudagraph_mode", "NONE", f.Line, "--enforce-eager")
	}
	if !sizesSet && haveMax {
		f := c.Lookup("--max-num-seqs")
		fs.add("capture_sizes", DefaultCaptureSizes(maxSeqs), f.Line, "vLLM-Ascend default list for --max-num-seqs "+f.Value)
	}
	fs.additional(c)
}

// value is the flag's value with the script's variables expanded; ok is
// false when the flag is absent or its value unknown.
func (fs *factSet) value(c *Command, flag string) (*Flag, string, bool) {
	f := c.Lookup(flag)
	if f == nil || !f.HasValue || f.unknown != "" {
		return f, "", false
	}
	v, ok := fs.s.expand(f.Value)
	return f, v, ok
}

func (fs *factSet) intFlag(c *Command, flag, fact string) (int, bool) {
	f, v, ok := fs.value(c, flag)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false
	}
	how := flag + " " + f.Value
	if v != f.Value {
		how += " = " + v
	}
	fs.add(fact, n, f.Line, how)
	return n, true
}

// compilation adds cudagraph_mode and capture_sizes from
// --compilation-config; it says whether capture_sizes was set.
func (fs *factSet) compilation(c *Command) bool {
	f, v, ok := fs.value(c, "--compilation-config")
	if !ok {
		return false
	}
	var cc struct {
		Mode  json.RawMessage `json:"cudagraph_mode"`
		Sizes []int           `json:"cudagraph_capture_sizes"`
	}
	if fs.decodeChecked(f, "--compilation-config", v, &cc) != nil {
		return false
	}
	if cc.Mode != nil {
		var text string
		if json.Unmarshal(cc.Mode, &text) != nil {
			text = string(cc.Mode) // a number, null, ...: not a mode name
		}
		if m, ok := CUDAGraphMode(text); ok {
			fs.add("cudagraph_mode", m, f.Line, "--compilation-config")
		} else {
			fs.invalid = append(fs.invalid, Fact{Name: "cudagraph_mode", Value: text, Source: fs.source(f.Line, "--compilation-config")})
		}
	}
	if cc.Sizes != nil {
		fs.add("capture_sizes", cc.Sizes, f.Line, "--compilation-config")
	}
	return cc.Sizes != nil
}

// additional adds the facts of --additional-config.
func (fs *factSet) additional(c *Command) {
	f, v, ok := fs.value(c, "--additional-config")
	if !ok {
		return
	}
	var ac map[string]any
	if fs.decodeChecked(f, "--additional-config", v, &ac) != nil {
		return
	}
	for _, k := range []string{"enable_flashcomm1", "multistream_overlap_shared_expert", "enable_cpu_binding"} {
		if b, ok := ac[k].(bool); ok {
			name := k
			if k == "enable_flashcomm1" {
				name = "flashcomm1"
			}
			fs.add(name, b, f.Line, "--additional-config "+k)
		}
	}
	if _, ok := ac["eplb_config"]; ok {
		fs.add("eplb", true, f.Line, "--additional-config eplb_config")
	}
}

// decodeChecked decodes the JSON object v of a config flag into out after
// checking its keys: a key the config does not take is a warning (an
// invalid fact named vllmconf.ConfigKeyFact), and when the key the user meant is
// unambiguous (vllmconf.UnknownKey.Meant) and not also given, the facts
// read the value under that key.
func (fs *factSet) decodeChecked(f *Flag, flag, v string, out any) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &obj); err != nil {
		return err
	}
	keys := slices.Sorted(maps.Keys(obj))
	for _, u := range vllmconf.CheckKeys(flag, keys) {
		fs.invalid = append(fs.invalid, Fact{Name: vllmconf.ConfigKeyFact, Value: u.Message(), Source: fs.source(f.Line, flag)})
		if _, given := obj[u.Meant]; u.Meant != "" && !given {
			obj[u.Meant] = obj[u.Key]
			delete(obj, u.Key)
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// reVar is a shell variable reference: $NAME, ${NAME}, ${NAME:-default}
// or ${NAME-default}.
var reVar = lazyre.New(`\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\})`)

// expand replaces the variable references in v with the values the script
// assigns them (or their ${NAME:-default}); ok is false when one has
// neither (the value is then unknown, never guessed).
func (s *Script) expand(v string) (string, bool) {
	ok := true
	for range 4 { // a value may refer to another variable
		if !strings.Contains(v, "$") {
			break
		}
		v = reVar().ReplaceAllStringFunc(v, func(ref string) string {
			m := reVar().FindStringSubmatch(ref)
			name := m[1] + m[2]
			if a := s.Env[name]; a != nil && a.unknown != "" {
				ok = false
				return ref
			}
			if a := s.Env[name]; a != nil && (a.Value != "" || !strings.Contains(ref, ":-")) {
				return a.Value
			}
			if strings.Contains(ref, "-") && m[2] != "" {
				return m[3]
			}
			ok = false
			return ref
		})
	}
	return v, ok && !strings.Contains(v, "$")
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// withVarFlags returns c with the flags of its variable words ($ARGS, where
// the script assigns ARGS="--max-num-seqs 32 ...") added after its own, for
// the facts only: edits change the command's own flags, never an
// assignment they came from.
func (s *Script) withVarFlags(c *Command) *Command {
	if len(c.vars) == 0 {
		return c
	}
	v := *c
	v.Flags = append([]*Flag(nil), c.Flags...)
	for _, t := range c.vars {
		val, ok := s.expand(t.text)
		if !ok {
			continue
		}
		words := strings.Fields(val)
		for j := 0; j < len(words); j++ {
			w := words[j]
			if !strings.HasPrefix(w, "--") {
				continue
			}
			f := &Flag{Name: w, Line: t.line}
			if name, val, ok := strings.Cut(w, "="); ok {
				f.Name, f.Value, f.HasValue = name, strings.Trim(val, `"'`), true
			} else if !booleanFlags[w] && j+1 < len(words) && !strings.HasPrefix(words[j+1], "--") {
				f.Value, f.HasValue = strings.Trim(words[j+1], `"'`), true
				j++
			}
			v.Flags = append(v.Flags, f)
		}
	}
	return &v
}

// Unread says what of the command npuprof could not read, each with its
// line: variable words ($ARGS) the script never assigns, words and flag
// values only running the script gives (a command substitution,
// arithmetic, an expansion other than $NAME and ${NAME:-default}), and
// the variables the command runs with whose value is such. What they hold
// is unknown, and so are the facts they would set.
func (s *Script) Unread() []string {
	c := s.Serve
	if c == nil {
		return nil
	}
	var out []string
	say := func(line int, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: ", s.Path, line)+fmt.Sprintf(format, args...))
	}
	for _, n := range slices.Sorted(maps.Keys(s.Env)) {
		if a := s.Env[n]; a.unknown != "" && a.Line <= c.LastLine {
			say(a.Line, "%s: %s is not run (npuprof never runs the script): env.%s is unknown", a.raw, a.unknown, n)
		}
	}
	if c.model != nil && c.model.unknown != "" {
		say(c.model.line, "the model %s: %s is not run: the model is unknown", c.model.raw, c.model.unknown)
	}
	for _, f := range c.Flags {
		switch {
		case f.unknown != "":
			say(f.Line, "%s: %s is not run: the value of %s is unknown, and so are the facts it sets", f.raw, f.unknown, f.Name)
		case f.HasValue && strings.Contains(f.Value, "$"):
			if _, ok := s.expand(f.Value); !ok {
				say(f.Line, "%s: a variable the script does not assign: the value of %s is unknown, and so are the facts it sets", f.raw, f.Name)
			}
		}
	}
	for _, t := range c.opaque {
		say(t.line, "%s: %s is not run: the flags it gives are unread, so no flag is known to be absent", t.raw, t.unknown)
	}
	for _, t := range c.vars {
		if _, ok := s.expand(t.text); !ok {
			say(t.line, "%s is not assigned in the script: the flags it holds are unread", t.text)
		}
	}
	return out
}
