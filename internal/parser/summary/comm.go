package summary

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/internal/intern"
	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// ReadCommunication reads communication.json ({step: {collective|p2p:
// {"op@hash": {"Communication Time Info": {...}, ...}}}}) as a stream: only
// the "Communication Time Info" numbers are kept, and everything else (the
// bandwidth tables are most of the file) is skipped without being decoded,
// so memory grows with the ops kept, not with the file.
// Ops come out ordered by step, kind and name; a key repeated in one object
// keeps its last value, as a JSON object decode would. Anything but white
// space after the top object (a damaged brace that closed it early) is an
// error.
func ReadCommunication(r io.Reader, file string) ([]model.CommOpInfo, error) {
	return readCommunication(r, file, MaxCommunicationBytes, (*commOps).read,
		"expected communication.json ({step: {collective|p2p: {op@group: ...}}})")
}

// ReadMsprofCommunication reads msprof's analyze/communication.json, keyed
// by op directly ({"op@hash": {"Communication Time Info": ...}, "Total Op
// Info": ...}), or the torch_npu shape with step and kind levels, streamed
// as ReadCommunication does. The first key of the first object decides the
// shape: a key "Communication ..." makes the file keyed by op. Ops of the
// keyed-by-op shape are step "step", kind "p2p" (hcom_send, hcom_receive,
// hcom_batchsendrecv) or "collective", as msprof-analyze wraps them; a
// top-level key starting with "total" (any case) is the file's total, not
// an op.
func ReadMsprofCommunication(r io.Reader, file string) ([]model.CommOpInfo, error) {
	return readCommunication(r, file, MaxMsprofCommunicationBytes, (*commOps).readMsprof,
		"expected msprof communication.json ({op@group: {Communication Time Info: ...}})")
}

func readCommunication(r io.Reader, file string, max int64, read func(*commOps, *tok) error, expected string) ([]model.CommOpInfo, error) {
	t := &tok{r: limit(r, max), buf: getBlock(&commBlocks, commBlock)}
	defer func() { putBlock(&commBlocks, t.buf, commBlock) }()
	var ops commOps
	err := read(&ops, t)
	if err == nil {
		err = t.onlyWhitespaceLeft()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", file, expected, err)
	}
	return ops.sorted(file)
}

// onlyWhitespaceLeft fails unless only white space follows the value read.
func (t *tok) onlyWhitespaceLeft() error {
	if c, ok := t.peek(); ok {
		return t.errAt("more data after the object ends (a damaged brace?): found %q", c)
	}
	return t.err
}

// commOp is one op as read: its key ("op@hash"), its times, and whether a
// time is not a finite number.
type commOp struct {
	key string
	ci  model.CommOpInfo
	bad bool
	// noHash: the key has no "@" before a group hash (every writer puts
	// one there; a damaged key loses the op's group)
	noHash bool
	// ctrl: the key holds a control character (a damaged byte: collective
	// names and group hashes are printable)
	ctrl bool
	// seen holds a bit per time key read (seenStart, ...); an op without
	// its start or elapsed time, or whose times disagree, is left out
	seen uint8
}

// the keys of "Communication Time Info" an op is checked for
const (
	seenInfo uint8 = 1 << iota
	seenStart
	seenElapse
	seenTransit
	seenWait
	seenIdle
)

// commOps holds the ops of a communication.json in the order read.
type commOps struct {
	// in chunks, so that growing never copies (a 200 MB rank has 23k ops)
	chunks [][]commOp
	n      int
	// steps and kinds repeat; op keys are unique per op (the op's
	// number is in the name), so they are only copied
	steps, kinds intern.Strings
	opKeys       intern.Arena
}

func (c *commOps) at(i int32) *commOp { return &c.chunks[i/commChunk][i%commChunk] }

// newOp is the op of key k ("op@hash") in step and kind, before its times
// are read.
func (c *commOps) newOp(k []byte, step, kind string) commOp {
	key := c.opKeys.Str(k)
	op, hash := key, ""
	if i := strings.LastIndexByte(key, '@'); i >= 0 {
		op, hash = key[:i], key[i+1:]
	}
	return commOp{key: key, ci: model.CommOpInfo{Step: step, Kind: kind, Op: op, GroupHash: hash}, noHash: op == "" || hash == "", ctrl: hasCtrl(key)}
}

// hasCtrl reports whether s holds a byte below 0x20.
func hasCtrl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' {
			return true
		}
	}
	return false
}

// add keeps o.
func (c *commOps) add(o *commOp) {
	if c.n%commChunk == 0 {
		c.chunks = append(c.chunks, make([]commOp, 0, commChunk))
	}
	c.chunks[c.n/commChunk] = append(c.chunks[c.n/commChunk], *o)
	c.n++
}

// read reads every op of the file: {step: {kind: {key: {...}}}}.
func (c *commOps) read(t *tok) error {
	return t.object(func(k []byte) error { return c.readStep(t, c.steps.Intern(k)) })
}

// readStep reads one step's object: {kind: {key: {...}}}.
func (c *commOps) readStep(t *tok, step string) error {
	return t.object(func(k []byte) error { return c.readKind(t, step, c.kinds.Intern(k)) })
}

// readKind reads one kind's object of ops: {key: {...}}.
func (c *commOps) readKind(t *tok, step, kind string) error {
	return t.object(func(k []byte) error {
		if string(k) == "Total Op Info" {
			return t.skip()
		}
		o := c.newOp(k, step, kind)
		if err := c.readOp(t, &o); err != nil {
			return err
		}
		c.add(&o)
		return nil
	})
}

// the shapes of msprof's communication.json
const (
	shapeUnknown = iota
	shapeByOp    // {op@hash: {...}}
	shapeSteps   // {step: {kind: {op@hash: {...}}}}
)

// readMsprof reads msprof's communication.json, of either shape (see
// ReadMsprofCommunication).
func (c *commOps) readMsprof(t *tok) error {
	shape := shapeUnknown
	// members read whole before the shape was known (empty objects):
	// keyed by op, each is an op without its time info
	var pending []string
	err := t.object(func(k []byte) error {
		switch shape {
		case shapeByOp:
			if msprofTotal(k) {
				return t.skip()
			}
			o := c.msprofOp(k)
			if err := c.readOp(t, &o); err != nil {
				return err
			}
			c.add(&o)
			return nil
		case shapeSteps:
			return c.readStep(t, c.steps.Intern(k))
		}
		// the first member: its first key decides
		name := c.opKeys.Str(k)
		total := msprofTotal(k)
		var o commOp
		var blank model.CommOpInfo
		step, started := "", false
		err := t.object(func(k []byte) error {
			if shape == shapeUnknown {
				if bytes.HasPrefix(k, []byte("Communication ")) {
					shape = shapeByOp
				} else {
					shape, step = shapeSteps, c.steps.Intern([]byte(name))
				}
			}
			if shape == shapeSteps {
				return c.readKind(t, step, c.kinds.Intern(k))
			}
			if total {
				return t.skip()
			}
			if !started {
				o, started = c.msprofOp([]byte(name)), true
				blank = o.ci
			}
			return c.opMember(t, &o, blank, k)
		})
		switch {
		case err != nil:
			return err
		case shape == shapeUnknown:
			pending = append(pending, name)
		case started:
			c.add(&o)
		}
		return nil
	})
	if shape == shapeByOp {
		for _, name := range pending {
			if !msprofTotal([]byte(name)) {
				o := c.msprofOp([]byte(name))
				c.add(&o)
			}
		}
	}
	return err
}

// msprofTotal: a top-level key of msprof's keyed-by-op shape that is the
// file's total, not an op.
func msprofTotal(k []byte) bool {
	return len(k) >= 5 && strings.EqualFold(string(k[:5]), "total")
}

// msprofOp is the op of a top-level key of msprof's keyed-by-op shape.
func (c *commOps) msprofOp(k []byte) commOp {
	kind := "collective"
	for _, p := range []string{"hcom_send", "hcom_receive", "hcom_batchsendrecv"} {
		if len(k) >= len(p) && strings.EqualFold(string(k[:len(p)]), p) {
			kind = "p2p"
		}
	}
	return c.newOp(k, c.steps.Intern([]byte("step")), c.kinds.Intern([]byte(kind)))
}

// readOp reads one op's object into o: its "Communication Time Info"
// (the last one, when repeated); the rest is skipped.
func (c *commOps) readOp(t *tok, o *commOp) error {
	blank := o.ci
	return t.object(func(k []byte) error { return c.opMember(t, o, blank, k) })
}

// opMember reads the member k of an op's object into o (blank is the op
// before any time was read): "Communication Time Info" is read, anything
// else skipped.
func (c *commOps) opMember(t *tok, o *commOp, blank model.CommOpInfo, k []byte) error {
	if string(k) != "Communication Time Info" {
		return t.skip()
	}
	o.ci, o.bad, o.seen = blank, false, seenInfo
	if t.timeInfo(&o.ci, &o.bad, &o.seen) {
		return nil
	}
	// not a flat object of numbers in the buffer: the same, token by
	// token
	o.ci, o.bad, o.seen = blank, false, seenInfo
	return t.object(func(f []byte) error {
		// the ratios and anything newer are read and ignored; the key
		// first: reading the value may move the buffer
		key := string(f)
		v, err := t.scalar()
		if err != nil {
			return err
		}
		if !setTimeInfo(&o.ci, key, v, &o.seen) {
			o.bad = true
		}
		return nil
	})
}

// sorted returns the ops ordered by step, kind and key, stably; of a key
// repeated in one object the last one; ops with a bad time are left out
// (and counted in the error, returned with the rest).
func (c *commOps) sorted(file string) ([]model.CommOpInfo, error) {
	order := c.order()
	kept := make([]model.CommOpInfo, 0, c.n)
	skipped, firstBad := 0, ""
	invalid, firstInvalid := 0, ""
	for i, e := range order {
		o := c.at(e.i)
		if i+1 < len(order) {
			if next := order[i+1]; next.group == e.group && next.key == e.key {
				continue
			}
		}
		if o.bad {
			if skipped == 0 {
				firstBad = o.ci.Step + "/" + o.ci.Kind + "/" + o.key
			}
			skipped++
			continue
		}
		if why := o.invalid(); why != "" {
			if invalid == 0 {
				firstInvalid = o.ci.Step + "/" + o.ci.Kind + "/" + o.key + ": " + why
			}
			invalid++
			continue
		}
		kept = append(kept, o.ci)
	}
	if len(kept) == 0 {
		kept = nil
	}
	var errs []string
	if skipped > 0 {
		errs = append(errs, fmt.Sprintf("skipped %d op(s) with a time out of range (first %q)", skipped, clip(firstBad, 120)))
	}
	if invalid > 0 {
		errs = append(errs, fmt.Sprintf("skipped %d op(s) that fail validation (first %q)", invalid, clip(firstInvalid, 160)))
	}
	if len(errs) > 0 {
		// the rest is returned with the error, which callers turn into a
		// warning (and the rank partial)
		return kept, fmt.Errorf("%s: %s", file, strings.Join(errs, "; "))
	}
	return kept, nil
}

// invalid says why an op read whole cannot be trusted ("" when it can):
// a key that is not "op@hash" or holds a control character, no "Communication Time Info", no elapsed time in it, or an
// elapsed time that is not the sum of its transit, wait and idle times
// (torch_npu writes idle as the rest, so they always add up).
func (o *commOp) invalid() string {
	switch {
	case o.noHash:
		return `no "@<group hash>" in its key`
	case o.ctrl:
		return "a control character in its key"
	case o.seen&seenInfo == 0:
		return "no Communication Time Info"
	case o.seen&seenElapse == 0:
		return "no Elapse Time(ms)"
	}
	if o.seen&(seenTransit|seenWait|seenIdle) == seenTransit|seenWait|seenIdle {
		sum := o.ci.TransitMs + o.ci.WaitMs + o.ci.IdleMs
		if math.Abs(sum-o.ci.ElapseMs) > 5e-6+1e-6*math.Abs(o.ci.ElapseMs) {
			return fmt.Sprintf("Elapse Time(ms) %g is not Transit + Wait + Idle (%g)", o.ci.ElapseMs, sum)
		}
	}
	return ""
}

// commEntry is an op's place in the sorted order: (step, kind) as one
// number, their ranks, its key and its index.
type commEntry struct {
	group uint64
	key   string
	i     int32
}

// order sorts small entries, not the ops themselves (136 bytes each), by
// step, kind and key, stably.
func (c *commOps) order() []commEntry {
	stepRank, kindRank := c.steps.Ranks(), c.kinds.Ranks()
	order := make([]commEntry, c.n)
	for i := range order {
		o := c.at(int32(i))
		order[i] = commEntry{uint64(stepRank[o.ci.Step])<<32 | uint64(kindRank[o.ci.Kind]), o.key, int32(i)}
	}
	cmp := func(a, b commEntry) int {
		if a.group != b.group {
			return cmpUint64(a.group, b.group)
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.i - b.i)
	}
	if !slices.IsSortedFunc(order, cmp) {
		slices.SortFunc(order, cmp)
	}
	return order
}

// timeInfo reads a "Communication Time Info" object the common way it is
// written: members with plain keys and number values, all in the buffer.
// It reads them as the token-by-token path does, in one loop over the
// buffer; for anything else (a string or object value, an escape, the end
// of the buffer) it consumes nothing and returns false.
func (t *tok) timeInfo(ci *model.CommOpInfo, bad *bool, seen *uint8) bool {
	b := t.buf[:t.end]
	i := t.pos
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i++
	i = skipWS(b, i)
	if i < len(b) && b[i] == '}' {
		t.pos = i + 1
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		k := quoteOrBackslash(b[i+1:])
		if k < 0 || b[i+1+k] != '"' {
			return false
		}
		key := b[i+1 : i+1+k]
		i += k + 2
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i++
		i = skipWS(b, i)
		v := i
		for i < len(b) {
			c := b[i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				break
			}
			if c == '"' || c == '{' || c == '[' {
				return false
			}
			i++
		}
		if i == v || i >= len(b) {
			return false
		}
		val := b[v:i]
		i = skipWS(b, i)
		if i >= len(b) || (b[i] != ',' && b[i] != '}') {
			return false
		}
		if !setTimeInfo(ci, string(key), val, seen) {
			*bad = true
		}
		if b[i] == '}' {
			t.pos = i + 1
			return true
		}
		i++
		i = skipWS(b, i)
	}
}

// skipWS returns the index of the first byte from i that is not JSON
// whitespace.
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// simpleFloat parses the plain decimals communication.json is made of
// ("0.06927", "-1.5", "3"): at most 15 significant digits and 22 after the
// point, where the mantissa and the power of ten are both exact in a
// float64 and one division is correctly rounded, so the result is
// strconv.ParseFloat's (which takes the same exact path for them). ok is
// false for anything else, which goes to strconv.
func simpleFloat(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 24 {
		return 0, false
	}
	var mant uint64
	digits, frac := 0, -1
	for i, c := range b {
		if c == '.' {
			if frac >= 0 || i == 0 {
				return 0, false
			}
			frac = 0
			continue
		}
		if c -= '0'; c > 9 {
			return 0, false
		}
		mant = mant*10 + uint64(c)
		if mant != 0 {
			digits++
		}
		if frac >= 0 {
			frac++
		}
	}
	if digits > 15 || frac == 0 || frac > 22 {
		return 0, false
	}
	f := float64(mant)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

// commChunk is how many ops are kept per chunk while reading.
const commChunk = 4096

// commBlock is how much of communication.json is read at once (a
// variable so tests can make tokens straddle blocks).
var commBlock = 1 << 20

// tok is a small pull tokenizer over a stream, for JSON files whose shape
// is known: it reads objects member by member and skips what it is not
// asked for without building values. Keys and scalars come back as slices
// of the read buffer when they lie in it (valid until the next token);
// values nobody reads are crossed by skip, which looks at 8 bytes at a
// time for the bytes that matter ('"', brackets) and crosses strings the
// same way.
type tok struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // file offset of buf[0]
	eof      bool
	err      error
	scratch  []byte
	key      []byte // a key kept out of buf
	bs       int    // where skip found the next backslash in buf (valid when >= pos)
}

func (t *tok) fill() bool {
	if t.eof {
		return false
	}
	t.off += int64(t.end)
	t.pos, t.end, t.bs = 0, 0, -1
	for {
		n, err := t.r.Read(t.buf)
		t.end = n
		if err != nil {
			t.eof = true
			if err != io.EOF {
				t.err = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

func (t *tok) errAt(format string, args ...any) error {
	if t.err != nil {
		return t.err
	}
	return fmt.Errorf("at byte %d: %s", t.off+int64(t.pos), fmt.Sprintf(format, args...))
}

// eof is the error for input that ends inside the document.
func (t *tok) unexpectedEOF() error {
	if t.err != nil {
		return t.err
	}
	return io.ErrUnexpectedEOF
}

// peek returns the next byte that is not whitespace, without consuming it.
func (t *tok) peek() (byte, bool) {
	for {
		for t.pos < t.end {
			c := t.buf[t.pos]
			if c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				t.pos++
				continue
			}
			return c, true
		}
		if !t.fill() {
			return 0, false
		}
	}
}

// nextInBuf reports whether the next byte that is not whitespace is in
// the buffer (peek would not refill it).
func (t *tok) nextInBuf() bool {
	for i := t.pos; i < t.end; i++ {
		if c := t.buf[i]; c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return true
		}
	}
	return false
}

func (t *tok) expect(c byte) error {
	got, ok := t.peek()
	if !ok {
		return t.unexpectedEOF()
	}
	if got != c {
		return t.errAt("expected %q, found %q", c, got)
	}
	t.pos++
	return nil
}

// str reads a string (the opening quote is next) and returns its text,
// escapes resolved as encoding/json does; the slice is valid until the
// next token.
func (t *tok) str() ([]byte, error) {
	if err := t.expect('"'); err != nil {
		return nil, err
	}
	// the common case: the whole string is in the buffer, without escapes
	b := t.buf[t.pos:t.end]
	if i := quoteOrBackslash(b); i >= 0 && b[i] == '"' {
		t.pos += i + 1
		return b[:i:i], nil
	}
	t.scratch = t.scratch[:0]
	esc := false
	for {
		if t.pos >= t.end && !t.fill() {
			return nil, t.unexpectedEOF()
		}
		b := t.buf[t.pos:t.end]
		i := quoteOrBackslash(b)
		if i < 0 {
			t.scratch = append(t.scratch, b...)
			t.pos = t.end
			continue
		}
		t.scratch = append(t.scratch, b[:i]...)
		t.pos += i + 1
		if b[i] == '"' {
			break
		}
		// an escape: keep it raw, resolve below
		esc = true
		t.scratch = append(t.scratch, '\\')
		if t.pos >= t.end && !t.fill() {
			return nil, t.unexpectedEOF()
		}
		t.scratch = append(t.scratch, t.buf[t.pos])
		t.pos++
	}
	if esc {
		var u string
		if err := json.Unmarshal(append(append([]byte{'"'}, t.scratch...), '"'), &u); err == nil {
			t.scratch = append(t.scratch[:0], u...)
		}
	}
	return t.scratch, nil
}

// object reads an object, calling member for each key (valid only until
// member reads on); member must consume the value. A null object is
// empty.
func (t *tok) object(member func(key []byte) error) error {
	c, ok := t.peek()
	if !ok {
		return t.unexpectedEOF()
	}
	if c == 'n' {
		_, err := t.scalar()
		return err
	}
	if err := t.expect('{'); err != nil {
		return err
	}
	if c, ok := t.peek(); ok && c == '}' {
		t.pos++
		return nil
	}
	for {
		k, err := t.str()
		if err != nil {
			return err
		}
		if !t.nextInBuf() {
			// reading on to the ':' refills the buffer k may be in
			t.key = append(t.key[:0], k...)
			k = t.key
		}
		if err := t.expect(':'); err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
		c, ok := t.peek()
		if !ok {
			return t.unexpectedEOF()
		}
		t.pos++
		switch c {
		case ',':
			continue
		case '}':
			return nil
		default:
			return t.errAt("expected ',' or '}', found %q", c)
		}
	}
}

// scalar reads a number, literal or string value and returns its text
// (string content without quotes), valid until the next token.
func (t *tok) scalar() ([]byte, error) {
	c, ok := t.peek()
	if !ok {
		return nil, t.unexpectedEOF()
	}
	switch c {
	case '"':
		return t.str()
	case '{', '[':
		return nil, t.skip()
	}
	// the common case: the value ends in the buffer
	for i := t.pos; i < t.end; i++ {
		if c := t.buf[i]; c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			if i == t.pos {
				return nil, t.errAt("expected a value, found %q", c)
			}
			v := t.buf[t.pos:i:i]
			t.pos = i
			return v, nil
		}
	}
	t.scratch = t.scratch[:0]
	for {
		if t.pos >= t.end && !t.fill() {
			break
		}
		c := t.buf[t.pos]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			break
		}
		t.scratch = append(t.scratch, c)
		t.pos++
	}
	if len(t.scratch) == 0 {
		return nil, t.errAt("expected a value, found %q", c)
	}
	return t.scratch, nil
}

// skip consumes one value of any kind without decoding it, 64 bytes at a
// time where it can: it builds bit masks of the quotes and brackets of the
// block (8 bytes at a time, SWAR), marks what lies inside strings by a
// prefix XOR of the quotes, and only looks at the brackets outside them
// one by one when the nesting could end in the block. That holds while no
// backslash can make a quote an escaped one: a block with a backslash,
// the end of the buffer and refills go byte by byte.
func (t *tok) skip() error {
	c, ok := t.peek()
	if !ok {
		return t.unexpectedEOF()
	}
	if c != '{' && c != '[' {
		_, err := t.scalar()
		return err
	}
	depth := 0
	inStr := false
	esc := false // in a string, after a backslash
	for {
		if t.pos >= t.end && !t.fill() {
			return t.unexpectedEOF()
		}
		b := t.buf[:t.end]
		i := t.pos
		// the next backslash: the file has few or none, so it is looked
		// for once per buffer, not once per skipped value
		if t.bs < i {
			t.bs = nextByte(b, i, '\\')
		}
		bs := t.bs
		for i < len(b) {
			if !esc && i+64 <= bs {
				q, o, c := blockMasks(b[i : i+64])
				in := prefixXor(q)
				if inStr {
					in = ^in
				}
				if st := (o | c) &^ in; st != 0 {
					oc, cc := bits.OnesCount64(o&st), bits.OnesCount64(c&st)
					if depth > cc {
						depth += oc - cc
					} else {
						for ; st != 0; st &= st - 1 {
							k := bits.TrailingZeros64(st)
							if o>>k&1 != 0 {
								depth++
								continue
							}
							depth--
							if depth == 0 {
								t.pos = i + k + 1
								return nil
							}
						}
					}
				}
				inStr = in>>63 != 0
				i += 64
				continue
			}
			switch c := b[i]; {
			case esc:
				esc = false
			case inStr:
				if c == '\\' {
					esc = true
				} else if c == '"' {
					inStr = false
				}
			case c == '"':
				inStr = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					t.pos = i + 1
					return nil
				}
			}
			i++
			if i > bs {
				bs = nextByte(b, i, '\\')
				t.bs = bs
			}
		}
		t.pos = t.end
	}
}

// nextByte is the index of the next c in b from i, or len(b).
func nextByte(b []byte, i int, c byte) int {
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}

// blockMasks returns, for 64 bytes, bit masks (bit k for byte k) of the
// quotes, the opening brackets ('{', '[') and the closing ones.
func blockMasks(b []byte) (q, o, c uint64) {
	const (
		ones7f = 0x7f7f7f7f7f7f7f7f
		highs  = 0x8080808080808080
		quotes = 0x2222222222222222
		lower  = 0x2020202020202020 // '[' | 0x20 == '{', ']' | 0x20 == '}'
		opens  = 0x7b7b7b7b7b7b7b7b
		closes = 0x7d7d7d7d7d7d7d7d
		gather = 0x0102040810204080 // moves the flags of 8 bytes into one byte
	)
	b = b[:64]
	// from the last word to the first, so each is shifted in by 8
	for j := 56; j >= 0; j -= 8 {
		x := binary.LittleEndian.Uint64(b[j : j+8])
		y := x | lower
		// 0x80 in exactly the bytes of v that are zero
		vq, vo, vc := x^quotes, y^opens, y^closes
		q = q<<8 | (^((vq&ones7f+ones7f)|vq)&highs>>7)*gather>>56
		o = o<<8 | (^((vo&ones7f+ones7f)|vo)&highs>>7)*gather>>56
		c = c<<8 | (^((vc&ones7f+ones7f)|vc)&highs>>7)*gather>>56
	}
	return q, o, c
}

// prefixXor sets bit k when an odd number of bits 0..k of m are set: with
// m the quotes of a block, the bytes from an opening quote up to (not
// including) its closing one.
func prefixXor(m uint64) uint64 {
	m ^= m << 1
	m ^= m << 2
	m ^= m << 4
	m ^= m << 8
	m ^= m << 16
	m ^= m << 32
	return m
}

// quoteOrBackslash is bytes.IndexAny(b, `"\`): 8 bytes at a time for the
// short strings of keys, then two IndexByte scans (vectorised) instead of
// IndexAny's byte loop.
func quoteOrBackslash(b []byte) int {
	const ones7f, highs, quotes, bslash = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080, 0x2222222222222222, 0x5c5c5c5c5c5c5c5c
	i := 0
	for ; i+8 <= len(b) && i < 32; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, e := x^quotes, x^bslash
		if m := ^((q&ones7f+ones7f)|q)&highs | ^((e&ones7f+ones7f)|e)&highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	b = b[i:]
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		if e := bytes.IndexByte(b, '\\'); e >= 0 {
			return i + e
		}
		return -1
	}
	if e := bytes.IndexByte(b[:q], '\\'); e >= 0 {
		return i + e
	}
	return i + q
}

// setTimeInfo sets the field of ci that a communication.json "Communication
// Time Info" key names from its raw value; other keys (the ratios, anything
// newer) are ignored. It is false when a time in ms is not a finite number.
// kept: a key to the field it fills, as traceview's parseEvent does for its own format
func setTimeInfo(ci *model.CommOpInfo, key string, val []byte, seen *uint8) bool {
	var dst *float64
	switch key {
	case "Start Timestamp(us)":
		var ok bool
		ci.Start, ok = timeparse.MicrosToNanos(val)
		*seen |= seenStart
		return ok
	case "Elapse Time(ms)":
		dst = &ci.ElapseMs
		*seen |= seenElapse
	case "Transit Time(ms)":
		dst = &ci.TransitMs
		*seen |= seenTransit
	case "Wait Time(ms)":
		dst = &ci.WaitMs
		*seen |= seenWait
	case "Synchronization Time(ms)":
		dst = &ci.SyncMs
	case "Idle Time(ms)":
		dst = &ci.IdleMs
		*seen |= seenIdle
	}
	if dst == nil {
		return true
	}
	x, ok := simpleFloat(val)
	if !ok {
		var err error
		x, err = strconv.ParseFloat(string(val), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			*dst = x
			return false
		}
	}
	*dst = x
	return true
}
