package delegate

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tools/instance"
)

// repeated is n copies of byte b, made as they are read (a 200 MB line
// that is never allocated).
type repeated struct {
	b byte
	n int64
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > r.n {
		k = r.n
	}
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return int(k), nil
}

// stream is an agent CLI's output made of literal text and readers.
func stream(parts ...any) io.Reader {
	var rs []io.Reader
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			rs = append(rs, strings.NewReader(v))
		case io.Reader:
			rs = append(rs, v)
		}
	}
	return io.MultiReader(rs...)
}

const testSession = "11111111-2222-4333-8444-555555555555"

// readTurn reads a claude stream-json output as a turn's runner does.
func readTurn(t *testing.T, src io.Reader, maxLine int, maxTranscript int64) (turnOutcome, *bytes.Buffer, string) {
	t.Helper()
	r := turnRun{l: instance.Launcher{Name: "claude"}, h: headlessContracts()["claude"], maxLine: maxLine, maxTranscript: maxTranscript}
	var out turnOutcome
	var mu sync.Mutex
	transcript := &bytes.Buffer{}
	nonJSON := r.read(src, transcript, &out, &mu, func(string) {}, func() { t.Error("the turn was killed") }, nil)
	return out, transcript, nonJSON
}

// peakHeap samples the heap in use while f runs and returns its peak
// and the bytes f allocated in all.
func peakHeap(f func()) (peak, allocated uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak {
				peak = m.HeapInuse
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return peak - min(peak, before.HeapInuse), after.TotalAlloc - before.TotalAlloc
}

// A 200 MB tool result (one JSON line, as claude prints a Read of a big
// file) is read with the heap staying small: the line is cut as it
// streams by, its string keeping the first quarter of the line cap and
// saying how much it lost; the lines after it parse; the result is the
// CLI's; the cut is reported; the transcript holds the cut line, valid
// JSON. Before the cap, such a line cost the runner 1.97 GB of RSS.
func TestReadHugeLineBoundedMemory(t *testing.T) {
	const huge = 200 << 20
	var out turnOutcome
	var transcript *bytes.Buffer
	peak, allocated := peakHeap(func() {
		out, transcript, _ = readTurn(t, stream(
			`{"type":"system","subtype":"init","session_id":"`+testSession+`"}`+"\n",
			`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"`, &repeated{'x', huge}, `"}]},"session_id":"`+testSession+`"}`+"\n",
			`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"done reading"}],"usage":{"input_tokens":10,"output_tokens":5}},"session_id":"`+testSession+`"}`+"\n",
			`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"the file is all x","session_id":"`+testSession+`","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":5}}`+"\n",
		), 0, 0)
	})
	t.Logf("a %d-byte line: peak heap in use %.1f MiB above the start, %.1f MiB allocated in all", huge, float64(peak)/(1<<20), float64(allocated)/(1<<20))
	if peak > 48<<20 || allocated > 96<<20 {
		t.Errorf("reading a %d MiB line took a peak of %d MiB of heap and %d MiB allocated; want it bounded by the line cap (4 MiB), well under 48 and 96", huge>>20, peak>>20, allocated>>20)
	}
	if !out.Finished || out.Result != "the file is all x" || out.AgentSessionID != testSession || out.CostUSD != 0.5 || out.Tokens != 15 {
		t.Errorf("outcome = finished %v, result %q, session %q, cost %v, tokens %d; want the result line's", out.Finished, out.Result, out.AgentSessionID, out.CostUSD, out.Tokens)
	}
	c := out.Cut
	if c == nil || c.LinesShortened != 1 || c.LinesSkipped != 0 || c.TranscriptLines != 0 || c.MaxLineBytes != defaultMaxLineBytes {
		t.Fatalf("cut = %+v; want one line shortened at the default cap", c)
	}
	lines := bytes.Split(bytes.TrimSpace(transcript.Bytes()), []byte("\n"))
	if len(lines) != 4 {
		t.Fatalf("transcript has %d lines; want 4", len(lines))
	}
	kept := defaultMaxLineBytes / 4
	var tool struct {
		Message struct {
			Content []struct {
				Content string `json:"content"`
			} `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(lines[1], &tool); err != nil || len(tool.Message.Content) != 1 {
		t.Fatalf("the cut line is not the tool result it was (%v): %.300s", err, lines[1])
	}
	got := tool.Message.Content[0].Content
	wantNote := "[... " + itoa(huge-kept) + " bytes cut by git codex]"
	if !strings.HasPrefix(got, strings.Repeat("x", kept)) || !strings.HasSuffix(got, wantNote) || len(got) != kept+len(wantNote) {
		t.Errorf("the cut string is %d bytes ending %q; want %d x's then %q", len(got), got[max(0, len(got)-60):], kept, wantNote)
	}
	if c.BytesDropped != int64(huge-kept-len(wantNote)) {
		t.Errorf("bytes_dropped = %d; want %d (the line's bytes less the cut line's)", c.BytesDropped, huge-kept-len(wantNote))
	}
	if int64(transcript.Len()) > 2<<20 {
		t.Errorf("the transcript is %d bytes; want the cut line's size", transcript.Len())
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A 200 MB result (the answer itself) keeps what the result needs: its
// session id, cost, usage, and the answer's first quarter of the line
// cap, which says it was cut.
func TestReadHugeResultLine(t *testing.T) {
	const huge = 200 << 20
	out, _, nonJSON := readTurn(t, stream(
		`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"`, &repeated{'y', huge}, `","session_id":"`+testSession+`","total_cost_usd":0.25,"usage":{"input_tokens":7,"output_tokens":3}}`+"\n",
	), 0, 0)
	if nonJSON != "" || !out.Finished || out.AgentSessionID != testSession || out.CostUSD != 0.25 || out.Tokens != 10 {
		t.Fatalf("outcome = %+v (non-JSON %q); want the result line's session, cost and tokens", out, nonJSON)
	}
	if !strings.HasPrefix(out.Result, "yyyy") || !strings.HasSuffix(out.Result, " bytes cut by git codex]") || len(out.Result) > defaultMaxLineBytes {
		t.Errorf("result is %d bytes ending %q; want its start and a note of the cut", len(out.Result), out.Result[max(0, len(out.Result)-60):])
	}
	if out.Cut == nil || out.Cut.LinesShortened != 1 {
		t.Errorf("cut = %+v; want the result line shortened", out.Cut)
	}
}

// A line still over the cap with its strings cut (a million numbers) is
// skipped unread and counted; the lines after it parse. Is the skipped
// line the result, the turn fails saying so, not "no result".
func TestReadSkipsLineOverCapEvenCut(t *testing.T) {
	big := func() io.Reader {
		return stream(`{"type":"user","message":{"content":[`, strings.NewReader(strings.Repeat("1,", 200<<10)), `1]}}`+"\n")
	}
	out, transcript, _ := readTurn(t, stream(
		big(),
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"after"}]}}`+"\n",
		`{"type":"result","subtype":"success","result":"ok","session_id":"`+testSession+`"}`+"\n",
	), minLineBytes, 0)
	if !out.Finished || out.Result != "ok" || out.Cut == nil || out.Cut.LinesSkipped != 1 || out.Cut.BytesDropped < 400<<10 {
		t.Fatalf("outcome = %+v, cut %+v; want the line skipped and counted, the rest read", out, out.Cut)
	}
	if n := bytes.Count(transcript.Bytes(), []byte("\n")); n != 2 {
		t.Errorf("transcript has %d lines; want the 2 read", n)
	}

	r := turnRun{l: instance.Launcher{Name: "claude"}, h: headlessContracts()["claude"], maxLine: minLineBytes}
	out, _, _ = readTurn(t, stream(`{"type":"result","subtype":"success","usage":[`, strings.NewReader(strings.Repeat("1,", 200<<10)), `1]}`+"\n"), minLineBytes, 0)
	r.conclude(&out, nil, "")
	if !strings.Contains(out.Failure, "claude's result line was too large to read") || !strings.Contains(out.Failure, "skipped") {
		t.Errorf("failure = %q; want the result line's size named", out.Failure)
	}
}

// Past the transcript cap, lines are read and counted, not written.
func TestTranscriptCap(t *testing.T) {
	line := `{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"` + strings.Repeat("z", 100) + `"}]}}` + "\n"
	var parts []any
	for range 50 {
		parts = append(parts, line)
	}
	parts = append(parts, `{"type":"result","subtype":"success","result":"ok"}`+"\n")
	out, transcript, _ := readTurn(t, stream(parts...), 0, int64(10*len(line)))
	if transcript.Len() != 10*len(line) {
		t.Errorf("transcript has %d bytes; want the cap's %d", transcript.Len(), 10*len(line))
	}
	if !out.Finished || out.Cut == nil || out.Cut.TranscriptLines != 41 || out.Cut.TranscriptBytes != int64(40*len(line)+len(`{"type":"result","subtype":"success","result":"ok"}`)+1) || out.Cut.LinesShortened != 0 {
		t.Errorf("outcome finished %v, cut %+v; want 41 lines unwritten", out.Finished, out.Cut)
	}
	if !strings.Contains(out.Cut.Summary(), "41 line(s)") {
		t.Errorf("summary %q", out.Cut.Summary())
	}
}

// The cutter keeps JSON valid whatever sits at the cut: escapes, \u
// sequences, multi-byte characters; short strings and the structure pass
// unchanged.
func TestStringCutter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		keep     int
		want     string
	}{
		{"short", `{"a":"bc","d":[1,"e"]}`, 4, `{"a":"bc","d":[1,"e"]}`},
		{"cut", `{"a":"abcdefgh"}`, 3, `{"a":"abc[... 5 bytes cut by git codex]"}`},
		{"escaped quote kept whole", `{"a":"ab\"cdef"}`, 3, `{"a":"ab\"[... 4 bytes cut by git codex]"}`},
		{"escape at the cut", `{"a":"abc\\def"}`, 3, `{"a":"abc[... 5 bytes cut by git codex]"}`},
		{"unicode escape", `{"a":"a\u00e9bcdef"}`, 2, `{"a":"a\u00e9[... 5 bytes cut by git codex]"}`},
		{"utf-8", `{"a":"aéé"}`, 2, `{"a":"aé[... 2 bytes cut by git codex]"}`},
		{"keys too", `{"abcdef":1}`, 2, `{"ab[... 4 bytes cut by git codex]":1}`},
	} {
		c := &stringCutter{keep: tc.keep, max: 1 << 20}
		// fed a byte at a time: chunk boundaries fall everywhere
		for i := range len(tc.in) {
			c.write([]byte{tc.in[i]})
		}
		if string(c.out) != tc.want || !json.Valid(c.out) {
			t.Errorf("%s: cut %s = %s (valid %v); want %s", tc.name, tc.in, c.out, json.Valid(c.out), tc.want)
		}
		c = &stringCutter{keep: tc.keep, max: 1 << 20}
		c.write([]byte(tc.in))
		if string(c.out) != tc.want {
			t.Errorf("%s, in one chunk: %s; want %s", tc.name, c.out, tc.want)
		}
	}
	c := &stringCutter{keep: 4, max: 10}
	c.write([]byte(`[1,2,3,4,5,6,7,8]`))
	if !c.over || c.out != nil {
		t.Errorf("output past max: over %v, out %q; want over and nothing kept", c.over, c.out)
	}
}
