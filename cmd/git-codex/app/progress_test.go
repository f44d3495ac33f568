package app

import "testing"

// A retry's progress message reaches a person as one plain line; a
// delegated turn's messages are printed as they came.
func TestProgressLine(t *testing.T) {
	retry := `{"attempt":1,"error":"ref locked","of":5,"tool":"mail_send","type":"retry","wait_ms":200,"what":"state-lock"}`
	if got, want := progressLine(retry), "git codex: mail_send: state-lock failed (try 1 of 5), trying again in 200ms: ref locked"; got != want {
		t.Errorf("progressLine(retry) = %q, want %q", got, want)
	}
	for _, msg := range []string{`{"type":"assistant","text":"hi"}`, "plain text", `{"type":"retry"`} {
		if got := progressLine(msg); got != msg {
			t.Errorf("progressLine(%q) = %q", msg, got)
		}
	}
}
