package service

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

// field is where one of the model's columns is in a table (-1: absent)
// and its unit.
type field struct {
	i    int
	unit int64
}

// find maps the first header column whose base is one of names.
func find(cols []column, names ...string) field {
	for _, n := range names {
		for i, c := range cols {
			if c.base == n {
				return field{i, c.unit}
			}
		}
	}
	return field{-1, 0}
}

func (f field) cell(cells [][]byte) []byte {
	if f.i < 0 || f.i >= len(cells) {
		return nil
	}
	return cells[f.i]
}

// requestSink reads request.csv (every spelling) into ServiceRequests.
type requestSink struct {
	r                                          *model.ServiceRequests
	start, e2e, ttft, queue, recv, reply, hitF field
}

func (s *requestSink) header(cols []column) error {
	s.start = find(cols, "start_time_httpreq", "start_time", "start_datetime")
	s.e2e = find(cols, "execution_time")
	s.ttft = find(cols, "first_token_latency", "ttft")
	s.queue = find(cols, "queue_wait_time", "que_wait_time")
	s.recv = find(cols, "recv_token_size", "recvtokensize=")
	s.reply = find(cols, "reply_token_size", "replytokensize=")
	s.hitF = find(cols, "cache_hit_rate")
	if s.e2e.i < 0 && s.start.i < 0 {
		return errors.New("no execution_time or start_time column: not a request table")
	}
	return nil
}

func (s *requestSink) grow(n int) { s.r.Grow(n) }

func (s *requestSink) row(c [][]byte) bool {
	start, ok1 := optTime(s.start.cell(c), s.start.unit)
	e2e, ok2 := optDur(s.e2e.cell(c), s.e2e.unit)
	ttft, ok3 := optDur(s.ttft.cell(c), s.ttft.unit)
	queue, ok4 := optDur(s.queue.cell(c), s.queue.unit)
	recv, ok5 := optInt(s.recv.cell(c))
	reply, ok6 := optInt(s.reply.cell(c))
	hit, ok7 := optFloat(s.hitF.cell(c))
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return false
	}
	s.r.Add(model.ServiceRequest{Start: start, E2E: e2e, TTFT: ttft, QueueWait: queue, RecvTokens: recv, ReplyTokens: reply, CacheHit: hit})
	return true
}

// batchSink reads batch.csv into ServiceBatches.
type batchSink struct {
	b                                            *model.ServiceBatches
	name, start, end, dur, size, resList         field
	prefill, decode, pTokens, dTokens, dp, freeB field
	// perDP are the dp{i}-size and dp{i}-forward columns
	perDP []dpCol
}

type dpCol struct {
	dp      int32
	forward bool
	f       field
}

func (s *batchSink) header(cols []column) error {
	s.name = find(cols, "name")
	s.start = find(cols, "start_time", "start_datetime")
	s.end = find(cols, "end_time", "end_datetime")
	s.dur = find(cols, "during_time")
	s.size = find(cols, "total_batch_size", "batch_size")
	s.resList = find(cols, "res_list")
	s.prefill = find(cols, "prefill_batch_size")
	s.decode = find(cols, "decode_batch_size")
	s.pTokens = find(cols, "prefill_scheduled_tokens")
	s.dTokens = find(cols, "decode_scheduled_tokens")
	s.dp = find(cols, "dp_rank")
	s.freeB = find(cols, "free_blocks")
	for i, c := range cols {
		rest, ok := strings.CutPrefix(c.base, "dp")
		if !ok {
			continue
		}
		num, kind, ok := strings.Cut(rest, "-")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 || (kind != "size" && kind != "forward") {
			continue
		}
		s.perDP = append(s.perDP, dpCol{dp: int32(n), forward: kind == "forward", f: field{i, c.unit}})
	}
	if s.name.i < 0 || s.start.i < 0 {
		return errors.New("no name or start_time column: not a batch table")
	}
	return nil
}

func (s *batchSink) grow(n int) { s.b.Grow(n) }

// batchKind maps a row name to its kind; ok is false for other rows.
func batchKind(name []byte) (uint8, bool) {
	switch string(trim(name)) {
	case "BatchSchedule", "batchFrameworkProcessing", "Schedule":
		return model.BatchSchedule, true
	case "modelExec", "Execute":
		return model.BatchExecute, true
	}
	return 0, false
}

func (s *batchSink) row(c [][]byte) bool {
	kind, ok := batchKind(s.name.cell(c))
	if !ok {
		return true // another event's row: not a batch
	}
	start, ok1 := timeCell(s.start.cell(c), s.start.unit)
	dur, ok2 := optDur(s.dur.cell(c), s.dur.unit)
	if ok2 && dur == model.NoServiceValue && s.end.i >= 0 {
		end, ok := optTime(s.end.cell(c), s.end.unit)
		if ok && end != model.NoServiceValue {
			dur = end - start
		}
	}
	size, ok3 := optInt(s.size.cell(c))
	pre, ok4 := optInt(s.prefill.cell(c))
	dec, ok5 := optInt(s.decode.cell(c))
	pt, ok6 := optInt(s.pTokens.cell(c))
	dt, ok7 := optInt(s.dTokens.cell(c))
	dp, ok8 := optInt(s.dp.cell(c))
	fb, ok9 := optInt(s.freeB.cell(c))
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9) {
		return false
	}
	if s.prefill.i < 0 && s.resList.i >= 0 {
		pre, dec, pt, dt = countResList(s.resList.cell(c))
	}
	row := int32(len(s.b.Kind))
	keep := len(s.b.PerDP)
	for _, d := range s.perDP {
		cell := d.f.cell(c)
		if absent(cell) {
			continue
		}
		e := model.ServiceBatchDP{Row: row, DP: d.dp, Size: model.NoServiceValue, Forward: model.NoServiceValue}
		var ok bool
		if d.forward {
			e.Forward, ok = durCell(cell, d.f.unit)
		} else {
			e.Size, ok = intCell(cell)
		}
		if !ok {
			// a bad row leaves nothing behind
			s.b.PerDP = s.b.PerDP[:keep]
			return false
		}
		// the size and the forward of one domain share an entry
		if n := len(s.b.PerDP); n > 0 && s.b.PerDP[n-1].Row == row && s.b.PerDP[n-1].DP == d.dp {
			if d.forward {
				s.b.PerDP[n-1].Forward = e.Forward
			} else {
				s.b.PerDP[n-1].Size = e.Size
			}
			continue
		}
		s.b.PerDP = append(s.b.PerDP, e)
	}
	s.b.Add(model.ServiceBatch{Kind: kind, Start: start, Dur: dur, Size: size, Prefill: pre, Decode: dec, PrefillTokens: pt, DecodeTokens: dt, DP: dp, FreeBlocks: fb})
	return true
}

// countResList counts a res_list cell's requests by phase, the way the
// writer does for its Prefill_/Decode_ columns: a request whose "type" is
// 0 (else whose "iter" is 0) is prefill, 1 (else iter > 0) decode; its
// tokens are its num_scheduled_tokens. The cell is a Python list of dicts
// ("[{'rid': '7', 'iter': 0, 'num_scheduled_tokens': 512}, ...]"); a list
// of plain ids says no phase (NoServiceValue).
func countResList(b []byte) (pre, dec, pt, dt int32) {
	b = trim(b)
	if bytes.IndexByte(b, '{') < 0 {
		return model.NoServiceValue, model.NoServiceValue, model.NoServiceValue, model.NoServiceValue
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '{')
		if i < 0 {
			break
		}
		j := bytes.IndexByte(b[i:], '}')
		if j < 0 {
			break
		}
		d := b[i+1 : i+j]
		b = b[i+j+1:]
		typ, hasType := dictInt(d, "type")
		if !hasType {
			it, ok := dictInt(d, "iter")
			switch {
			case !ok:
				typ = -1
			case it == 0:
				typ = 0
			default:
				typ = 1
			}
		}
		tok, ok := dictInt(d, "num_scheduled_tokens")
		if !ok {
			tok, _ = dictInt(d, "num_scheduled_tokens=")
		}
		switch typ {
		case 0:
			pre++
			pt += int32(tok)
		case 1:
			dec++
			dt += int32(tok)
		}
	}
	return pre, dec, pt, dt
}

// dictInt finds 'key': N in a Python dict's text.
func dictInt(d []byte, key string) (int64, bool) {
	for _, q := range []string{"'", `"`} {
		k := []byte(q + key + q)
		i := bytes.Index(d, k)
		if i < 0 {
			continue
		}
		rest := bytes.TrimLeft(d[i+len(k):], " ")
		rest, ok := bytes.CutPrefix(rest, []byte(":"))
		if !ok {
			continue
		}
		rest = bytes.TrimLeft(rest, " '\"")
		n := 0
		for n < len(rest) && (rest[n] >= '0' && rest[n] <= '9' || rest[n] == '.' || rest[n] == '-') {
			n++
		}
		v, ok := timeparse.ToNanos(rest[:n], 1)
		if !ok || v > math.MaxInt32 {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// kvSink reads kvcache.csv into ServiceKV.
type kvSink struct {
	k                              *model.ServiceKV
	time, name, free, total, usage field
}

func (s *kvSink) header(cols []column) error {
	s.time = find(cols, "start_time", "timestamp", "start_datetime")
	s.name = find(cols, "name", "action")
	s.free = find(cols, "free_blocks", "device_kvcache_left", "freeblocks=", "deviceblock=")
	s.total = find(cols, "total_blocks", "totalblocks=")
	s.usage = find(cols, "kvcache_usage_rate", "usagepercent=")
	if s.time.i < 0 {
		return errors.New("no start_time or timestamp column: not a kvcache table")
	}
	return nil
}

func (s *kvSink) grow(n int) { s.k.Grow(n) }

// kvEvent maps a row's event name to its kind.
func kvEvent(name []byte) uint8 {
	n := strings.ToLower(string(trim(name)))
	switch {
	case strings.Contains(n, "preempt") || n == "swapout":
		return model.KVPreempt
	case strings.HasPrefix(n, "allocate"):
		return model.KVAllocate
	case n == "free":
		return model.KVFree
	}
	return model.KVOther
}

func (s *kvSink) row(c [][]byte) bool {
	t, ok1 := timeCell(s.time.cell(c), s.time.unit)
	free, ok2 := optInt(s.free.cell(c))
	total, ok3 := optInt(s.total.cell(c))
	usage, ok4 := optFloat(s.usage.cell(c))
	if !(ok1 && ok2 && ok3 && ok4) {
		return false
	}
	// UsagePercent= may be a percentage (the writer divides by 100 above 1)
	if usage > 1 {
		usage /= 100
	}
	s.k.Add(model.ServiceKVRow{Time: t, Event: kvEvent(s.name.cell(c)), Free: free, Total: total, Usage: usage})
	return true
}

// forwardSink reads forward.csv into ServiceForwards.
type forwardSink struct {
	f                                *model.ServiceForwards
	name, start, end, dur, size, dpF field
}

func (s *forwardSink) header(cols []column) error {
	s.name = find(cols, "name")
	s.start = find(cols, "start_time", "start_datetime")
	s.end = find(cols, "end_time", "end_datetime")
	s.dur = find(cols, "during_time")
	s.size = find(cols, "batch_size")
	s.dpF = find(cols, "dp_rank")
	if s.start.i < 0 || (s.dur.i < 0 && s.end.i < 0) {
		return errors.New("no start_time and during_time columns: not a forward table")
	}
	return nil
}

func (s *forwardSink) grow(n int) { s.f.Grow(n) }

func (s *forwardSink) row(c [][]byte) bool {
	if s.name.i >= 0 && string(trim(s.name.cell(c))) != "forward" {
		return true
	}
	start, ok1 := timeCell(s.start.cell(c), s.start.unit)
	dur, ok2 := optDur(s.dur.cell(c), s.dur.unit)
	if ok2 && dur == model.NoServiceValue {
		end, ok := optTime(s.end.cell(c), s.end.unit)
		if !ok || end == model.NoServiceValue {
			return false
		}
		dur = end - start
	}
	size, ok3 := optInt(s.size.cell(c))
	dp, ok4 := optInt(s.dpF.cell(c))
	if !(ok1 && ok2 && ok3 && ok4) {
		return false
	}
	s.f.Add(model.ServiceForward{Start: start, Dur: dur, BatchSize: size, DP: dp})
	return true
}
