package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRedactRecord: a credential is found in a record's text as decoded,
// whatever JSON escapes or line breaks surround it, and the record stays
// the same JSON with only that string changed.
func TestRedactRecord(t *testing.T) {
	tok := "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
	ctok := "ctok_" + strings.Repeat("0123456789abcdef", 4)
	for _, tt := range []struct{ name, in, want string }{
		{"plain", `{"a": "x ` + tok + ` y", "b": 1}`, `{"a": "x [redacted: GitHub token] y", "b": 1}`},
		{"after a newline", `{"a": "env:\n` + tok + `"}`, `{"a": "env:\n[redacted: GitHub token]"}`},
		{"escaped marker", `{"a": "\u0067hp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"}`, `{"a": "[redacted: GitHub token]"}`},
		{"as a key", `{"` + ctok + `": true}`, `{"[redacted: git codex agent token]": true}`},
		{"two in one", `["` + tok + ` and ` + ctok + `"]`, `["[redacted: GitHub token] and [redacted: git codex agent token]"]`},
		{"not JSON", "line " + tok + "\n", "line [redacted: GitHub token]\n"},
		{"nothing", `{"a": "<b>&c \"q\""}`, `{"a": "<b>&c \"q\""}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, kinds := redactRecord([]byte(tt.in))
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if (len(kinds) > 0) != (tt.in != tt.want) {
				t.Errorf("kinds %v", kinds)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid(got) {
				t.Errorf("no longer JSON: %s", got)
			}
		})
	}
}
