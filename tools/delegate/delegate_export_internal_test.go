package delegate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTrajectoryWriteToMatchesMarshalIndent: the streamed export is, byte
// for byte, what json.MarshalIndent made of the whole trajectory read into
// memory (as export did): valid lines are messages (HTML characters
// escaped, blanks and a CR dropped), a line cut short and blank lines are
// left out, a long line is whole; a session without a transcript file has
// an empty one.
func TestTrajectoryWriteToMatchesMarshalIndent(t *testing.T) {
	dir := t.TempDir()
	d := Delegation{ID: "dlg-0123456789abcdef", Agent: "claude", Owner: "w1", Status: DelegationDone, CreatedAt: time.Unix(1700000000, 0).UTC()}
	long := `{"type":"assistant","text":"` + strings.Repeat("x", 3<<20) + `"}`
	lines := []string{
		`{"type":"system","subtype":"init"}`,
		`  {"a": [1, 2, {"b": "<tag> & more"}], "c": null}  `,
		"",
		`{"type":"cut short`,
		`{"crlf":true}` + "\r",
		long,
		`[1,2,3]`,
		`"just a string"`,
	}
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		file string
	}{{"transcript", path}, {"none", filepath.Join(dir, "missing.jsonl")}} {
		t.Run(tc.name, func(t *testing.T) {
			want := Trajectory{Version: 1, Session: d, Transcript: []json.RawMessage{}}
			if b, err := os.ReadFile(tc.file); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if l != "" && json.Valid([]byte(l)) {
						want.Transcript = append(want.Transcript, json.RawMessage(l))
					}
				}
			}
			wantBytes, err := json.MarshalIndent(want, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			wantBytes = append(wantBytes, '\n')
			x := &TrajectoryExport{Session: d, transcript: tc.file}
			var got bytes.Buffer
			n, err := x.WriteTo(&got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), wantBytes) {
				t.Errorf("streamed export differs from MarshalIndent's:\n%.2000s\nwant\n%.2000s", got.Bytes(), wantBytes)
			}
			if n != int64(got.Len()) || x.Messages != len(want.Transcript) {
				t.Errorf("WriteTo = %d bytes, %d messages; wrote %d bytes, want %d messages", n, x.Messages, got.Len(), len(want.Transcript))
			}
			var back Trajectory
			if err := json.Unmarshal(got.Bytes(), &back); err != nil || back.Session.ID != d.ID {
				t.Errorf("the export does not read back: %v", err)
			}
		})
	}
}
