package builtin_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
)

// refusedField checks a refusal: its code, the field it names, an unchanged tree
// and a whole audit commit (every trailer, the clock last).
func (e *env) refusedField(caller, tool, args string, code tools.Code, field string) tools.Result {
	e.t.Helper()
	tree := e.tree()
	r := e.call(caller, tool, args)
	if r.OK || r.Error.Code != code {
		e.t.Fatalf("%s %s: got %+v, want %s", tool, args, r, code)
	}
	if got := r.Error.Details["field"]; got != field {
		e.t.Errorf("%s %s: details.field = %v, want %s", tool, args, got, field)
	}
	if e.tree() != tree {
		e.t.Errorf("%s: the state changed on refusal", tool)
	}
	msg := e.audit(r)
	if !strings.Contains(msg, "Codex-Error: "+string(code)) || !strings.Contains(msg, "Codex-Clock: ") {
		e.t.Errorf("%s: audit commit cut short:\n%q", tool, msg)
	}
	return r
}

// fsckClean runs git fsck with the checks a receiving remote applies
// (receive.fsckObjects): a NUL in a commit message fails it.
func fsckClean(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "-c", "fsck.nulInCommit=error", "fsck", "--strict", "--no-dangling")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// TestControlCharactersRefused is issue 16 item 6: a NUL in a subject or a
// title cut the commit message at the NUL (all trailers lost) and failed
// every push to a remote that checks objects.
func TestControlCharactersRefused(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	tests := []struct{ name, caller, tool, args, field string }{
		{"NUL in a mail subject", "w1", "mail_send", `{"to":"w1","subject":"hi\u0000there","body":"b"}`, "subject"},
		{"NUL in a mail body", "w1", "mail_send", `{"to":"w1","subject":"s","body":"b\u0000"}`, "body"},
		{"newline in a subject", "w1", "mail_send", `{"to":"w1","subject":"s\nCodex-Result: forged","body":"b"}`, "subject"},
		{"escape in a subject", "w1", "mail_send", `{"to":"w1","subject":"\u001b[2Jgone","body":"b"}`, "subject"},
		{"NUL in a task title", human, "task_create", `{"title":"t\u0000","description":"d"}`, "title"},
		{"carriage return in a task title", human, "task_create", `{"title":"t\rover","description":"d"}`, "title"},
		{"NUL in a decision title", "w1", "log_decision", `{"title":"x\u0000y","body":"b"}`, "title"},
		{"bell in a decision body", "w1", "log_decision", `{"title":"x","body":"b\u0007"}`, "body"},
		{"DEL in a lock reason", "w1", "lock_acquire", `{"name":"db","reason":"r\u007f"}`, "reason"},
		{"C1 control in a lock name", "w1", "lock_acquire", `{"name":"db\u0085"}`, "name"},
		{"tab in a config value", human, "config_set", `{"key":"mail.max_body_bytes","value":"1\t2"}`, "value"},
		{"NUL in an agent id", human, "agent_register", `{"id":"a\u0000b","type":"worker"}`, "id"},
		{"NUL in a key", human, "agent_list", `{"ty\u0000pe":"worker"}`, "arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.refusedField(tt.caller, tt.tool, tt.args, tools.InvalidInput, tt.field)
		})
	}
	e.t = t
	// bodies and descriptions keep their lines and tabs (CRLF too)
	e.ok("w1", "mail_send", `{"to":"w1","subject":"s","body":"line 1\n\tline 2\r\nline 3"}`)
	e.ok(human, "task_create", `{"title":"t","description":"a\nb"}`)
	fsckClean(t, e.dir)
}

// TestInvalidUTF8Refused is issue 10 item 15: bytes that are not UTF-8 were
// silently turned into U+FFFD by the JSON decoder.
func TestInvalidUTF8Refused(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	tests := []struct{ name, tool, args, field string }{
		{"bad byte in a subject", "mail_send", "{\"to\":\"w1\",\"subject\":\"caf\xe9\",\"body\":\"b\"}", "subject"},
		{"bad byte in a body", "mail_send", "{\"to\":\"w1\",\"subject\":\"s\",\"body\":\"\xff\xfe\"}", "body"},
		{"lone surrogate in a body", "mail_send", `{"to":"w1","subject":"s","body":"a\ud800b"}`, "body"},
		{"bad byte in a lock name", "lock_acquire", "{\"name\":\"db\xc3\"}", "name"},
		{"bad byte in a decision title", "log_decision", "{\"title\":\"\x80\",\"body\":\"b\"}", "title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.refusedField("w1", tt.tool, tt.args, tools.InvalidInput, tt.field)
		})
	}
	e.t = t
	// U+FFFD sent on purpose is text like any other
	e.ok("w1", "mail_send", `{"to":"w1","subject":"�","body":"\ufffd"}`)
	fsckClean(t, e.dir)
}

// secrets are one of each shape docs/SECURITY.md lists (made up, but of
// the real form).
var secrets = map[string]string{
	"GitHub token":              "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A",
	"GitHub oauth token":        "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a",
	"GitHub fine-grained token": "github_pat_" + "11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV",
	"OpenAI API key":            "sk-" + "proj-4f9aQ2bX7cK1mZ8nW3vT6yR0",
	"Anthropic API key":         "sk-ant-" + "api03-Zk7Qw2Xe9Rt4Yu1Io6Pa3Sd8Fg5Hj0Kl",
	"Slack token":               "xoxb-" + "2048-7201-aB3dE5fG7hJ9",
	"AWS access key id":         "AKIA" + "IOSFODNN7EXAMPLE",
	"private key":               "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7V\n-----END RSA PRIVATE KEY-----",
	"bearer token":              "Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
	// issue 29 item 3: git codex's own credentials were stored verbatim
	"git codex agent token":   "ctok_" + strings.Repeat("0123456789abcdef", 4),
	"git codex session token": "sess_" + strings.Repeat("fedcba9876543210", 4),
	"git codex lock token":    "lock_" + strings.Repeat("00ff11ee22dd33cc", 4),
}

// TestSecretsRefusedAndStoredNowhere is issue 16 item 7: redaction went by
// key name only, so credentials under other names, nested, in arrays, in
// bodies and titles were stored in blobs and in the Codex-Args trailer, even
// for refused calls and unregistered callers.
func TestSecretsRefusedAndStoredNowhere(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	e.ok(human, "agent_register", `{"id":"boss","type":"supervisor"}`)
	lock := e.ok("w1", "lock_acquire", `{"name":"db"}`)
	_ = lock
	for kind, s := range secrets {
		q := strings.ReplaceAll(strings.ReplaceAll(s, "\n", `\n`), `"`, `\"`)
		shapes := []struct{ name, caller, tool, args, field string }{
			{"body", "w1", "mail_send", `{"to":"boss","subject":"s","body":"use ` + q + ` please"}`, "body"},
			{"subject", "w1", "mail_send", `{"to":"boss","subject":"key ` + q + `","body":"b"}`, "subject"},
			{"task title", "boss", "task_create", `{"title":"` + q + `","description":"d"}`, "title"},
			{"task description", "boss", "task_create", `{"title":"t","description":"x\n` + q + `"}`, "description"},
			{"decision title", "w1", "log_decision", `{"title":"` + q + `","body":"b"}`, "title"},
			{"lock reason", "w1", "lock_acquire", `{"name":"api","reason":"` + q + `"}`, "reason"},
			{"config value", human, "config_set", `{"key":"policy.worker.allow","value":"` + q + `"}`, "value"},
			{"under another key", "w1", "mail_send", `{"to":"boss","subject":"s","body":"b","note":"` + q + `"}`, "note"},
			{"nested", "w1", "mail_send", `{"to":"boss","subject":"s","body":"b","headers":{"Auth":"` + q + `"}}`, "headers.Auth"},
			{"in an array", "w1", "mail_send", `{"to":"boss","subject":"s","body":"b","list":["x",["` + q + `"]]}`, "list[1][0]"},
			{"as a key", "w1", "mail_send", `{"to":"boss","subject":"s","body":"b","` + q + `":1}`, "arguments"},
			{"unregistered caller", "ghost", "mail_send", `{"to":"boss","subject":"s","body":"` + q + `"}`, ""},
			{"unknown tool", "w1", "no_such_tool", `{"x":"` + q + `"}`, ""},
			{"caller without permission", "w1", "task_create", `{"title":"` + q + `","description":"d"}`, ""},
		}
		for _, sh := range shapes {
			t.Run(kind+"/"+sh.name, func(t *testing.T) {
				r := e.call(sh.caller, sh.tool, sh.args)
				if r.OK {
					t.Fatalf("accepted a %s", kind)
				}
				if sh.field != "" {
					if r.Error.Code != tools.SecretDetected || r.Error.Details["field"] != sh.field || r.Error.Details["kind"] == "" {
						t.Fatalf("got %+v, want SECRET_DETECTED naming %s", r.Error, sh.field)
					}
					if strings.Contains(r.Error.Message, s) {
						t.Errorf("the refusal repeats the secret: %s", r.Error.Message)
					}
				}
			})
		}
	}
	// Nothing reachable from git codex's refs holds any of them: blobs,
	// trees, commit messages (Codex-Args), notes.
	objs := gitstatetest.Git(t, e.dir, "rev-list", "--objects", "--glob=refs/codex/*", "--glob=refs/notes/*")
	var ids []string
	for _, l := range strings.Split(objs, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = e.dir
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 100 {
		t.Fatalf("only %d objects scanned", len(ids))
	}
	for kind, s := range secrets {
		for _, part := range []string{s, longestWord(s)} {
			if strings.Contains(string(all), part) {
				t.Errorf("a %s (%q) is stored in an object reachable from refs/codex or refs/notes", kind, part)
			}
		}
	}
	if !strings.Contains(string(all), "[redacted: GitHub token]") {
		t.Errorf("the audit trail does not say what it redacted")
	}
}

// TestSecretShapesAreNotWords keeps ordinary text out of the detector's way.
func TestSecretShapesAreNotWords(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	for _, text := range []string{
		"risk-assessment-for-the-new-cache-layer",
		"sk-lightweight-approach-for-the-cache",
		"the bearer of bad news, bearer tokens explained",
		"ghp_ is the prefix of GitHub tokens",
		"AKIA keys are 20 characters",
		"-----BEGIN PUBLIC KEY-----",
		"task-0123456789abcdefghijklmnop",
	} {
		e.ok("w1", "mail_send", `{"to":"w1","subject":"`+text+`","body":"`+text+`"}`)
	}
}

func longestWord(s string) string {
	long := ""
	for _, w := range strings.Fields(s) {
		if len(w) > len(long) {
			long = w
		}
	}
	return long
}
