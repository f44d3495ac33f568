package app

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/mail"
)

func TestPermuteArgs(t *testing.T) {
	e := &env{reg: builtin.Registry()}
	app := e.app()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"flag after positional", "agent show alice --json", "agent show --json alice"},
		{"global flag kept first", "--as bob mail read m-1 --json", "--as bob mail read --json m-1"},
		{"value flag moves with its value", "mail reply m-1 --body hi", "mail reply --body hi m-1"},
		{"equals form", "mail reply m-1 --body=hi", "mail reply --body=hi m-1"},
		{"double dash stops", "config set k -- -1", "config set k -- -1"},
		{"unknown command untouched", "nosuch a --b", "nosuch a --b"},
		{"call keeps json", `call mail_send {"a":1}`, `call mail_send {"a":1}`},
		{"global --as after the command", "mail inbox --as boss --json", "--as=boss mail inbox --json"},
		{"global --as= after positional", "mail read m-1 --as=boss", "--as=boss mail read m-1"},
		{"global --token first, with a value", "--as bob --token ctok_1 agent rotate-token bob --json", "--as bob --token ctok_1 agent rotate-token --json bob"},
		{"global --token after the command", "mail inbox --token ctok_1 --as boss", "--token=ctok_1 --as=boss mail inbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := permuteArgs(app, append([]string{"git-codex"}, strings.Fields(tt.in)...))
			if strings.Join(got[1:], " ") != tt.want {
				t.Errorf("permuteArgs(%q) = %q, want %q", tt.in, strings.Join(got[1:], " "), tt.want)
			}
		})
	}
}

// run executes Main in dir and returns stdout, stderr and the exit code.
func run(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	code := Main(append([]string{"git-codex"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestFlagsBecomeToolArguments(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	t.Setenv("CODEX_INSTANCE", "")
	if _, stderr, code := run(t, dir, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	run(t, dir, "agent", "add", "w", "--type", "worker")
	out, stderr, code := run(t, dir, "--as", "w", "mail", "send", "--to-human", "--subject", "S", "--body", "B", "--json")
	if code != 0 {
		t.Fatalf("mail send: %d %s", code, stderr)
	}
	var sent mail.MailSent
	if err := json.Unmarshal([]byte(out), &sent); err != nil || sent.To != tools.HumanInbox {
		t.Fatalf("sent = %s (%v)", out, err)
	}
	args := gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key=Codex-Args,valueonly)", "refs/codex/state")
	if args != `{"body":"B","subject":"S","to_human":true}` {
		t.Errorf("Codex-Args = %s: the CLI must send exactly the flags that were set", args)
	}
	// too many positional arguments is a usage error (exit 2) and writes nothing
	before := gitstatetest.Git(t, dir, "rev-parse", "refs/codex/state")
	if _, stderr, code := run(t, dir, "mail", "read", "a", "b"); code != exitUsage || !strings.Contains(stderr, "at most 1") {
		t.Errorf("extra argument: code %d, stderr %q", code, stderr)
	}
	if _, _, code := run(t, dir, "mail", "send", "--nope"); code != exitUsage {
		t.Errorf("unknown flag: code %d", code)
	}
	if after := gitstatetest.Git(t, dir, "rev-parse", "refs/codex/state"); after != before {
		t.Errorf("a usage error committed")
	}
	// a tool refusal exits 1 and names the code on stderr
	if _, stderr, code := run(t, dir, "--as", "w", "agent", "list"); code != exitError || !strings.Contains(stderr, "PERMISSION_DENIED") {
		t.Errorf("refusal: code %d, stderr %q", code, stderr)
	}
}

// TestListFlagsSendArrays: a flag for a list of strings (send_feedback's
// --actionable-items) sends a JSON array, one item per use of the flag
// (commas kept) or the items of one JSON array given; it once sent the
// flag's text as a string, which the tool's schema always refused.
func TestListFlagsSendArrays(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	t.Setenv("CODEX_INSTANCE", "")
	if _, stderr, code := run(t, dir, "init"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	run(t, dir, "agent", "add", "rv", "--type", "review")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--actionable-items", "extract GREETING, then test it", "--actionable-items", "add a usage line"}, `["extract GREETING, then test it","add a usage line"]`},
		{[]string{"--actionable-items", `["one","two"]`}, `["one","two"]`},
		{[]string{"--actionable-items", "only"}, `["only"]`},
	} {
		args := append([]string{"--as", "rv", "review", "feedback", "needs_work", "--feedback", "Use a constant."}, c.flags...)
		_, stderr, code := run(t, dir, args...)
		// rv is registered, not spawned for a coder: the tool refuses it
		// after the arguments passed the schema
		if code != exitError || !strings.Contains(stderr, "PERMISSION_DENIED") {
			t.Fatalf("%v: code %d, stderr %q: want the schema to accept the list", c.flags, code, stderr)
		}
		got := gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key=Codex-Args,valueonly)", lastAudit(t, dir))
		if !strings.Contains(got, `"actionable_items":`+c.want) {
			t.Errorf("%v: Codex-Args = %s, want actionable_items %s", c.flags, got, c.want)
		}
	}
	// every tool's list-of-strings input is such a flag
	e := &env{reg: builtin.Registry()}
	for _, tl := range e.reg.All() {
		for _, f := range inputFields(tl) {
			if f.kind != reflect.Slice || f.objects || isPositional(tl, f.json) {
				continue
			}
			found := false
			for _, fl := range inputFlags(tl) {
				if g, ok := fl.(*cli.GenericFlag); ok && g.Name == flagName(f.json) {
					_, found = g.Value.(*stringList)
				}
			}
			if !found {
				t.Errorf("%s: --%s is not a repeatable list flag", tl.Name, flagName(f.json))
			}
		}
	}
}
