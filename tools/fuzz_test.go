package tools

import (
	"encoding/json"
	"reflect"
	"testing"
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
			v, err := tool.decode(data)
			if err != nil {
				if err.Code != InvalidInput {
					t.Fatalf("%s: code %s for %q", tool.Name, err.Code, data)
				}
				continue
			}
			b, merr := json.Marshal(v)
			if merr != nil {
				t.Fatalf("%s: re-encode: %v", tool.Name, merr)
			}
			again, err := tool.decode(b)
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
		roundTrip[Mail](t, data)
		roundTrip[Agent](t, data)
		roundTrip[Decision](t, data)
		roundTrip[Config](t, data)
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
