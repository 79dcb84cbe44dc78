package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

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
// about them and treats the fact as unknown.
func (s *Script) FactsChecked() (facts, invalid []Fact) {
	var out []Fact
	add := func(name string, v any, line int, how string) {
		out = append(out, Fact{Name: name, Value: v, Source: fmt.Sprintf("%s:%d (%s)", s.Path, line, how)})
	}
	bad := func(name string, v any, line int, how string) {
		invalid = append(invalid, Fact{Name: name, Value: v, Source: fmt.Sprintf("%s:%d (%s)", s.Path, line, how)})
	}
	envNames := slices.Sorted(maps.Keys(s.Env))
	for _, n := range envNames {
		a := s.Env[n]
		add("env."+n, a.Value, a.Line, "export")
	}
	fc1 := false
	if a := s.Env["VLLM_ASCEND_ENABLE_FLASHCOMM1"]; a != nil {
		fc1 = truthy(a.Value)
		add("flashcomm1", fc1, a.Line, "VLLM_ASCEND_ENABLE_FLASHCOMM1="+a.Value)
	} else if a := s.Env["VLLM_ASCEND_ENABLE_FLASHCOMM"]; a != nil {
		fc1 = truthy(a.Value)
		add("flashcomm1", fc1, a.Line, "VLLM_ASCEND_ENABLE_FLASHCOMM="+a.Value)
	}
	// versions: the first line that states each (pip pins and lists, image
	// tags, CANN toolkit names)
	seenVer := map[string]bool{}
	pipShow := ""
	for i, l := range s.Lines {
		var vs []vllmconf.Version
		vs, pipShow = vllmconf.VersionsIn(l, pipShow)
		for _, v := range vs {
			if !seenVer[v.Fact] {
				seenVer[v.Fact] = true
				add(v.Fact, v.Value, i+1, v.How)
			}
		}
	}
	c := s.Serve
	if c == nil {
		return out, invalid
	}
	c = s.withVarFlags(c)
	if m, ok := s.expand(c.Model); ok && m != "" {
		add("model", m, c.FirstLine, "vllm serve")
	}
	intFlag := func(flag, fact string) (int, bool) {
		f := c.Lookup(flag)
		if f == nil || !f.HasValue {
			return 0, false
		}
		v, ok := s.expand(f.Value)
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
		add(fact, n, f.Line, how)
		return n, true
	}
	intFlag("--tensor-parallel-size", "tp")
	intFlag("--data-parallel-size", "dp")
	maxSeqs, haveMax := intFlag("--max-num-seqs", "max_num_seqs")
	boolFlag := func(flag, fact string) {
		if f := c.Lookup(flag); f != nil {
			add(fact, true, f.Line, flag)
		} else {
			add(fact, false, c.FirstLine, flag+" absent")
		}
	}
	boolFlag("--enable-expert-parallel", "expert_parallel")
	boolFlag("--async-scheduling", "async_scheduling")
	// Prefix caching is on by default in vLLM V1 and off in V0: only an
	// explicit flag says which.
	if f := c.Lookup("--no-enable-prefix-caching"); f != nil {
		add("prefix_caching", false, f.Line, f.Name)
	} else if f := c.Lookup("--enable-prefix-caching"); f != nil {
		add("prefix_caching", true, f.Line, f.Name)
	}
	sizesSet, modeSet := false, false
	if f := c.Lookup("--compilation-config"); f != nil && f.HasValue {
		var cc struct {
			Mode  json.RawMessage `json:"cudagraph_mode"`
			Sizes []int           `json:"cudagraph_capture_sizes"`
		}
		if json.Unmarshal([]byte(f.Value), &cc) == nil {
			if cc.Mode != nil {
				var text string
				if json.Unmarshal(cc.Mode, &text) != nil {
					text = string(cc.Mode) // a number, null, ...: not a mode name
				}
				if m, ok := CUDAGraphMode(text); ok {
					add("cudagraph_mode", m, f.Line, "--compilation-config")
					modeSet = true
				} else {
					bad("cudagraph_mode", text, f.Line, "--compilation-config")
				}
			}
			if cc.Sizes != nil {
				add("capture_sizes", cc.Sizes, f.Line, "--compilation-config")
				sizesSet = true
			}
		}
	}
	if f := c.Lookup("--enforce-eager"); f != nil {
		add("cudagraph_mode", "NONE", f.Line, "--enforce-eager")
		modeSet = true
	}
	if !sizesSet && haveMax {
		f := c.Lookup("--max-num-seqs")
		add("capture_sizes", DefaultCaptureSizes(maxSeqs), f.Line, "vLLM-Ascend default list for --max-num-seqs "+f.Value)
	}
	_ = modeSet
	if f := c.Lookup("--additional-config"); f != nil && f.HasValue {
		var ac map[string]any
		if json.Unmarshal([]byte(f.Value), &ac) == nil {
			for _, k := range []string{"enable_flashcomm1", "multistream_overlap_shared_expert", "enable_cpu_binding"} {
				if v, ok := ac[k].(bool); ok {
					name := k
					if k == "enable_flashcomm1" {
						name = "flashcomm1"
					}
					add(name, v, f.Line, "--additional-config "+k)
				}
			}
			if _, ok := ac["eplb_config"]; ok {
				add("eplb", true, f.Line, "--additional-config eplb_config")
			}
		}
	}
	return out, invalid
}

// reVar is a shell variable reference: $NAME, ${NAME}, ${NAME:-default}
// or ${NAME-default}.
var reVar = regexp.MustCompile(`\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\})`)

// expand replaces the variable references in v with the values the script
// assigns them (or their ${NAME:-default}); ok is false when one has
// neither (the value is then unknown, never guessed).
func (s *Script) expand(v string) (string, bool) {
	ok := true
	for range 4 { // a value may refer to another variable
		if !strings.Contains(v, "$") {
			break
		}
		v = reVar.ReplaceAllStringFunc(v, func(ref string) string {
			m := reVar.FindStringSubmatch(ref)
			name := m[1] + m[2]
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

// Unread names the variable words of the command that npuprof could not
// read as flags ($ARGS the script never assigns): what they hold is
// unknown, and so are the facts they would set.
func (s *Script) Unread() []string {
	c := s.Serve
	if c == nil {
		return nil
	}
	var out []string
	for _, t := range c.vars {
		if _, ok := s.expand(t.text); !ok {
			out = append(out, fmt.Sprintf("%s:%d: %s is not assigned in the script: the flags it holds are unread", s.Path, t.line, t.text))
		}
	}
	return out
}
