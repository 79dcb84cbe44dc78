package tracegen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// JoinTruth is the truth of a service folder written for a device
// capture of the same run.
type JoinTruth struct {
	// OffsetNs is the service clock minus the device clock.
	OffsetNs int64
	// Rows[i] is the batch.csv row (0-based, header excluded) of the
	// execution batch of device step i.
	Rows []int32
	// Mixed[i]: step i's batch mixes a prefill into its decode (every
	// third captured step, from the second).
	Mixed []bool
}

// GenerateServiceJoined writes, in dir, the service folder (request.csv,
// batch.csv; datetime spelling) MS Service Profiler recorded during the
// run a device capture comes from: steps are the capture's device steps
// (first to last device work, device clock, ns); the service clock is the
// device's plus offsetUs µs; the serving ran `before` batches before the
// capture window and `after` batches after it, each a scheduling row then
// an execution row. A captured step's execution row starts at the step's
// start on the service clock, to the µs (the service profile's
// resolution), and lasts as long; the others keep the median step's
// length and gap. One request spans the run.
func GenerateServiceJoined(dir string, steps [][2]int64, offsetUs int64, before, after int) (*JoinTruth, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("tracegen: no device steps to join")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := svcWriter{spelling: ServiceDatetime}
	roundUs := func(ns int64) int64 { return (ns + 500) / 1000 }
	// the median captured step and gap, in µs
	durs := make([]int64, 0, len(steps))
	for _, s := range steps {
		durs = append(durs, roundUs(s[1]-s[0]))
	}
	gap := int64(1000)
	if len(steps) > 1 {
		gap = roundUs(steps[1][0]-steps[0][1]) + 0
		if gap <= 0 {
			gap = 300
		}
	}
	med := durs[len(durs)/2]
	type row struct{ start, dur int64 }
	var exec []row
	first := roundUs(steps[0][0]) + offsetUs
	// the batches before the capture, growing by 1 µs each so that no two
	// intervals are alike
	for k := before; k > 0; k-- {
		exec = append(exec, row{first - int64(k)*(med+gap) - int64(k), med})
	}
	tr := &JoinTruth{OffsetNs: offsetUs * 1000}
	mixed := map[int]bool{}
	for i, s := range steps {
		tr.Rows = append(tr.Rows, int32(2*len(exec)+1))
		tr.Mixed = append(tr.Mixed, i%3 == 1)
		mixed[len(exec)] = i%3 == 1
		exec = append(exec, row{roundUs(s[0]) + offsetUs, durs[i]})
	}
	last := exec[len(exec)-1]
	for k := 1; k <= after; k++ {
		exec = append(exec, row{last.start + last.dur + int64(k)*(gap+med) - med + int64(k), med})
	}
	var b strings.Builder
	b.WriteString("name,res_list,start_time,end_time,during_time(ms),batch_type,prof_id,total_batch_size,Prefill_batch_size,Decode_batch_size,Prefill_scheduled_tokens,Decode_scheduled_tokens,total_scheduled_tokens,dp_rank\n")
	const schedUs = 150
	for k, e := range exec {
		pre, dec := 0, 1
		switch {
		case k == 0:
			pre, dec = 1, 0
		case mixed[k]:
			pre = 1
		}
		rl := fmt.Sprintf(`"[{'rid': '0', 'iter': %d}]"`, k)
		fmt.Fprintf(&b, "BatchSchedule,%s,%s,%s,%s,Decode,0,1,%d,%d,%d,%d,%d,0\n", rl, w.at(e.start-schedUs), w.at(e.start-schedUs+100), w.dur(100), pre, dec, pre*512, dec, pre*512+dec)
		fmt.Fprintf(&b, "modelExec,%s,%s,%s,%s,Decode,0,1,%d,%d,%d,%d,%d,0\n", rl, w.at(e.start), w.at(e.start+e.dur), w.dur(e.dur), pre, dec, pre*512, dec, pre*512+dec)
	}
	start := exec[0].start - schedUs - 2000
	end := last.start + last.dur + int64(after+1)*(gap+med)
	req := fmt.Sprintf("http_rid,start_datetime,recv_token_size,reply_token_size,execution_time(ms),queue_wait_time(ms),first_token_latency(ms),cache_hit_rate\n"+
		"chatcmpl-0,%s,512,%d,%s,2.000,%s,0\n", w.at(start), len(exec), w.dur(end-start), w.dur(exec[0].start+exec[0].dur-start))
	for name, body := range map[string]string{"batch.csv": b.String(), "request.csv": req} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	return tr, nil
}
