package traceview

// Frozen copies of the event scanner as it was before the fast paths
// (commit a433bdb): the reference the differential tests compare the
// optimized scanner with. Do not optimize these. Since then one rule of
// the grammar changed in both: a key follows the object's '{' or one ','
// (sep), so two members with no ',' between them, or two ',' in a row,
// are a damaged event.

import (
	"encoding/binary"

	"github.com/npuprof/npuprof/internal/parser/timeparse"
)

func parseEventRef(b []byte, i int, ev *event, rd *reader) int {
	*ev = event{}
	i++
	sep := true
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return iMore
		}
		switch b[i] {
		case '}':
			return i + 1
		case ',':
			if sep {
				return iBad
			}
			sep = true
			i++
			continue
		case '"':
			if !sep {
				return iBad
			}
			sep = false
		default:
			return iBad
		}
		ks := i + 1
		var dst *value
		ke := -1
		args := false
		if ks+8 <= len(b) {
			// the keys of the top level are short and few: recognise them
			// (with their closing quote) from one 8-byte load
			w := binary.LittleEndian.Uint64(b[ks:])
			switch {
			case w&mask3 == kPh:
				ke, dst = ks+2, &ev.phV
			case w&mask3 == kTs:
				ke, dst = ks+2, &ev.ts
			case w&mask3 == kID:
				ke, dst = ks+2, &ev.id
			case w&mask4 == kPid:
				ke, dst = ks+3, &ev.pid
			case w&mask4 == kTid:
				ke, dst = ks+3, &ev.tid
			case w&mask4 == kDur:
				ke, dst = ks+3, &ev.dur
			case w&mask4 == kCat:
				ke, dst = ks+3, &ev.cat
			case w&mask5 == kName:
				ke, dst = ks+4, &ev.name
			case w&mask5 == kArgs:
				ke, args = ks+4, true
			}
		}
		if ke < 0 {
			e, _ := strEnd(b, ks)
			if e < 0 {
				return e
			}
			ke = e
		}
		i = ke + 1
		if i+3 <= len(b) && b[i] == ':' && b[i+1] == ' ' && b[i+2] > ' ' {
			// `": v`, as every profiler writes it
			i += 2
		} else {
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i >= len(b) {
				return iMore
			}
			if b[i] != ':' {
				return iBad
			}
			i++
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i >= len(b) {
				return iMore
			}
		}
		if args && b[i] == '{' {
			if rd != nil && ev.skipArgs() {
				i = skipCompositeRef(b, i)
				if i < 0 {
					return i
				}
				ev.hasArgs = true
				continue
			}
			i = parseArgsRef(b, i, ev)
			if i < 0 {
				return i
			}
			continue
		}
		if dst == nil && !args {
			// a key the fast path did not see (near the end of the data)
			k := b[ks:ke]
			switch len(k) {
			case 2:
				switch string(k) {
				case "ph":
					dst = &ev.phV
				case "ts":
					dst = &ev.ts
				case "id":
					dst = &ev.id
				}
			case 3:
				switch string(k) {
				case "pid":
					dst = &ev.pid
				case "tid":
					dst = &ev.tid
				case "dur":
					dst = &ev.dur
				case "cat":
					dst = &ev.cat
				}
			case 4:
				switch string(k) {
				case "name":
					dst = &ev.name
				case "args":
					if b[i] == '{' {
						i = parseArgsRef(b, i, ev)
						if i < 0 {
							return i
						}
						continue
					}
				}
			}
		}
		if i = scanValueRef(b, i, dst, false); i < 0 {
			return i
		}
		if dst == &ev.pid && rd != nil {
			ev.kind, ev.pidIdx = rd.kindOf(ev.pid)
			if ev.kind == procOther && ev.plain() {
				return skipRestRef(b, i)
			}
		}
		if i+2 < len(b) && b[i] == ',' && b[i+1] == ' ' && b[i+2] == '"' {
			// `, "key`, as every profiler writes it
			i += 2
			sep = true
		}
	}
}

func parseArgsRef(b []byte, i int, ev *event) int {
	ev.hasArgs = true
	i++
	sep := true
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return iMore
		}
		switch b[i] {
		case '}':
			return i + 1
		case ',':
			if sep {
				return iBad
			}
			sep = true
			i++
			continue
		case '"':
			if !sep {
				return iBad
			}
			sep = false
		default:
			return iBad
		}
		ks := i + 1
		ke, _ := strEnd(b, ks)
		if ke < 0 {
			return ke
		}
		i = ke + 1
		if i+3 <= len(b) && b[i] == ':' && b[i+1] == ' ' && b[i+2] > ' ' {
			i += 2
		} else {
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i >= len(b) {
				return iMore
			}
			if b[i] != ':' {
				return iBad
			}
			i++
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i >= len(b) {
				return iMore
			}
		}
		k := b[ks:ke]
		var dst *value
		switch len(k) {
		case 4:
			if string(k) == "name" {
				dst = &ev.argName
			}
		case 6:
			if string(k) == "labels" {
				dst = &ev.argLabels
			}
		case 8:
			if string(k) == "Model Id" {
				dst = &ev.modelID
			}
		case 9:
			switch string(k) {
			case "Task Type":
				dst = &ev.taskType
			case "Stream Id":
				dst = &ev.stream
			}
		case 16:
			if string(k) == "Physic Stream Id" {
				dst = &ev.stream
			}
		}
		if i = scanValueRef(b, i, dst, true); i < 0 {
			return i
		}
		if i+2 < len(b) && b[i] == ',' && b[i+1] == ' ' && b[i+2] == '"' {
			i += 2
			sep = true
		}
	}
}

func scanValueRef(b []byte, i int, dst *value, set bool) int {
	switch c := b[i]; c {
	case '"':
		e, esc := strEnd(b, i+1)
		if e < 0 {
			return e
		}
		if dst != nil {
			*dst = value{b: b[i+1 : e], str: true, esc: esc, set: set}
		}
		return e + 1
	case '{', '[':
		return skipCompositeRef(b, i)
	default:
		j := i
		for j < len(b) && scalarByte[b[j]] {
			j++
		}
		if j >= len(b) {
			return iMore
		}
		if j == i {
			return iBad
		}
		if dst != nil {
			*dst = value{b: b[i:j], set: set}
		}
		return j
	}
}

func skipCompositeRef(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			e, _ := strEnd(b, i+1)
			if e < 0 {
				return e
			}
			i = e + 1
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return iMore
}

func skipRestRef(b []byte, i int) int {
	depth := 1
	for i < len(b) {
		switch b[i] {
		case '"':
			e, _ := strEnd(b, i+1)
			if e < 0 {
				return e
			}
			i = e + 1
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return iMore
}

func parseIntRef(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return timeparse.ParseInt(b)
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg, i = true, 1
		if len(b) == 1 || len(b) > 20 {
			return 0, false
		}
	} else if len(b) > 19 {
		return timeparse.ParseInt(b)
	}
	var n uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return timeparse.ParseInt(b)
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

func usToNsRef(b []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(b) && i < 16; i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		n = n*10 + int64(c)
	}
	if i == 0 || n > maxWholeUs {
		// 16 digits at or above 9223372036854775 µs would overflow n*1000:
		// timeparse takes them
		return timeparse.MicrosToNanos(b)
	}
	if i == len(b) {
		return n * 1000, true
	}
	if b[i] != '.' || len(b)-i-1 > 3 {
		return timeparse.MicrosToNanos(b)
	}
	f, k := int64(0), 0
	for i++; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			return timeparse.MicrosToNanos(b)
		}
		f = f*10 + int64(c)
		k++
	}
	for ; k < 3; k++ {
		f *= 10
	}
	return n*1000 + f, true
}
