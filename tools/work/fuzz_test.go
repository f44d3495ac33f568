package work

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/decision"
	"github.com/gitcodex/git-codex/tools/mail"
)

// FuzzDecodeArgs feeds arbitrary bytes to every tool's argument decoder. It
// must never panic, must refuse with INVALID_INPUT (never another code), and
// whatever it accepts must survive a JSON round trip unchanged and be
// accepted again: the decoder and the published schema agree.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `1`, `{"to":"bob","subject":"s","body":"b"}`,
		`{"to_human":true,"subject":"s","body":"b"}`, `{"to":1}`, `{"mail_id":"m-1"}`,
		`{"include_read":"yes"}`, `{"key":"policy.worker.allow","value":"mail.*"}`,
		`{"id":"alice","type":"worker","extra":1}`, `{"title":"t","body":"b"}`, `{"a":`, "{\"subject\":\"\\u0000\"}",
	} {
		f.Add([]byte(s))
	}
	reg := Builtin()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tool := range reg.All() {
			v, err := tool.Decode(data)
			if err != nil {
				if err.Code != tools.InvalidInput {
					t.Fatalf("%s: code %s for %q", tool.Name, err.Code, data)
				}
				continue
			}
			b, merr := json.Marshal(v)
			if merr != nil {
				t.Fatalf("%s: re-encode: %v", tool.Name, merr)
			}
			again, err := tool.Decode(b)
			if err != nil {
				t.Fatalf("%s: accepted %q but refused its re-encoding %s: %v", tool.Name, data, b, err)
			}
			if !reflect.DeepEqual(v, again) {
				t.Fatalf("%s: round trip changed %#v to %#v", tool.Name, v, again)
			}
		}
	})
}

// FuzzRecordDecode decodes arbitrary bytes as each record kind the state
// holds. Decoding must not panic, and a record that decodes must encode and
// decode back to itself, so a record read from a tree and written again
// (read flags, sync merges) loses nothing.
func FuzzRecordDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"m-1","from":"a","to":"b","subject":"s","body":"b","is_read":true,"created_at":"2026-11-22T21:52:24.974Z","read_at":null,"clock":3}`,
		`{"id":"alice","type":"worker","state":"idle","created_at":"2026-11-22T21:52:24Z","last_active_at":"2026-11-22T21:52:24Z","clock":1}`,
		`{"entries":{"mail.max_body_bytes":{"value":10,"set_by":"h","set_at":"2026-11-22T21:52:24Z","clock":2}}}`,
		`{"id":"d-1","title":"t","body":"b","actor":"a","clock":18446744073709551615}`,
		`{}`, `[]`, `null`, `{"clock":-1}`, `{"created_at":"not a time"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip[mail.Mail](t, data)
		roundTrip[tools.Agent](t, data)
		roundTrip[decision.Decision](t, data)
		roundTrip[tools.Config](t, data)
	})
}

func roundTrip[T any](t *testing.T, data []byte) {
	var v T
	if json.Unmarshal(data, &v) != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%T: encode: %v", v, err)
	}
	var again T
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("%T: decode own encoding %s: %v", v, b, err)
	}
	b2, _ := json.Marshal(again)
	if string(b) != string(b2) {
		t.Fatalf("%T: not stable: %s then %s", v, b, b2)
	}
}

// FuzzMergeRecordSymmetric: for any three versions of a record at a lock,
// task, agent or config path, MergeRecord gives the same bytes whichever
// side is ours, and a merged lock or task has at most one claim that is
// one of the two sides'. (`go test ./tools -fuzz FuzzMergeRecordSymmetric`;
// the seeds run with every `go test`.)
func FuzzMergeRecordSymmetric(f *testing.F) {
	lock := func(holder string, clock int, reason string) string {
		if holder == "" {
			return fmt.Sprintf(`{"name":"db","claim":null,"reason":%q,"updated_by":"x","clock":%d}`, reason, clock)
		}
		return fmt.Sprintf(`{"name":"db","claim":{"holder":%q,"clock":%d,"at":"2026-03-01T00:00:0%dZ"},"reason":%q,"updated_by":%q,"clock":%d}`,
			holder, clock, clock%10, reason, holder, clock)
	}
	for _, s := range [][3]string{
		{lock("", 1, ""), lock("w1", 3, "a"), lock("w2", 4, "b")},
		{lock("w0", 1, ""), lock("", 3, ""), lock("w1", 2, "c")},
		{lock("w0", 1, ""), lock("w0", 1, "renew"), lock("w1", 5, "")},
		{"", lock("w1", 3, "a"), lock("", 9, "")},
		{`{"claim":{"holder":""}}`, `{"claim":{"holder":"w1","at":"2026-03-01T12:00:00+02:00"}}`, `{"claim":{"holder":"w1","at":"2026-03-01T10:00:00Z"}}`},
		{`{"a":1,"a":2}`, `[]`, `null`},
		{`{"entries":{}}`, `{"entries":{"k":{"value":1,"clock":2}}}`, `{"entries":{"k":{"value":2,"clock":2}}}`},
	} {
		for _, p := range []string{"locks/a/b/0123456789abcdef00ab.json", "tasks/e/f/t-0000000000abcdef.json", "agents/w.json", tools.PathConfig} {
			f.Add(p, []byte(s[0]), []byte(s[1]), []byte(s[2]))
		}
	}
	kinds := Builtin().Kinds()
	f.Fuzz(func(t *testing.T, path string, base, ours, theirs []byte) {
		if _, ok := kinds.ClaimKindOf(path); !ok && path != tools.PathConfig && path != "agents/w.json" {
			return
		}
		if len(base) == 0 {
			base = nil
		}
		if len(ours) == 0 || len(theirs) == 0 {
			return // a deletion: the other side, tested elsewhere
		}
		a, b := kinds.MergeRecord(path, base, ours, theirs), kinds.MergeRecord(path, base, theirs, ours)
		if !bytes.Equal(a, b) {
			t.Fatalf("not symmetric at %s:\nbase   %s\nours   %s\ntheirs %s\n-> %s\n<- %s", path, base, ours, theirs, a, b)
		}
		if _, ok := kinds.ClaimKindOf(path); ok {
			if c := tools.ClaimOf(a); c != nil {
				if co, ct := tools.ClaimOf(ours), tools.ClaimOf(theirs); !c.Same(co) && !c.Same(ct) {
					t.Fatalf("merged claim %+v is neither side's (%+v, %+v)", c, co, ct)
				}
			}
		}
	})
}
