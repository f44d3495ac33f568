package testscripts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// mcpCommands are the script commands that talk to `git codex mcp` as real
// MCP clients do:
//
//	mcp [--as ID] [-e KEY=VAL]... list [-schemas]
//	    starts `git-codex mcp [--as ID]` in the current directory with the
//	    script's environment, connects the go-sdk client over stdio, and
//	    prints the tools' names, sorted, one a line; with -schemas each name
//	    is followed by a space and its input schema as compact JSON. It
//	    fails unless every tool has an object input schema.
//
//	mcp [--as ID] [-e KEY=VAL]... call [--set VAR=PATH]... TOOL [JSON]
//	    calls one tool (JSON defaults to {}) and prints the result's
//	    structured content as compact JSON. It fails if the call reported
//	    isError (with !: unless it did), or if the text content is not the
//	    same envelope as the structured content. A protocol error (no result
//	    at all) is printed on stderr and passes only with !. --set VAR=PATH
//	    sets $VAR to the value at PATH in the structured content (dotted
//	    keys and array indexes, e.g. data.mails.0.id).
//
//	mcp [--as ID] [-e KEY=VAL]... session FILE
//	    one server process, one client session, many calls: every line of
//	    FILE that is not blank or a # comment is "[!] [--set VAR=PATH]...
//	    TOOL [JSON]", run in order with the same checks as call, and printed
//	    as "TOOL JSON". $VAR and ${VAR} in a line are expanded when it runs,
//	    from the variables earlier lines set, then the script's environment;
//	    the variables set stay set in the script afterwards.
//
//	mcp [--as ID] [-e KEY=VAL]... pipe [-repeat N] FILE
//	    raw JSON-RPC, no client: starts the server with FILE as its whole
//	    stdin (closed as soon as it is written, as a script that pipes a
//	    batch does), N times (default 1). Each run must exit with status 0
//	    and answer every request in FILE (a JSON object with a method and
//	    a non-null id) exactly once, and send nothing else with an id. The
//	    last run's stdout (responses and notifications, one a line, as the
//	    server wrote them) and stderr become the command's.
//
// In all of them, whatever the server wrote on stderr becomes the command's
// stderr, and the server must exit with status 0 once its stdin is closed.
//
//	inspector [-exit N] ARGS...
//	    runs the MCP Inspector's CLI, `npx -y @modelcontextprotocol/inspector@2.12.0
//	    --cli ARGS...`, like exec (stdout and stderr are kept for the
//	    following commands), with npm's cache and user config taken from the
//	    user running the tests (the script's HOME is private), and fails
//	    unless it exits with status N (default 0; with !, any non-zero).
//
// Scripts that use inspector start with [!exec:npx] skip and [!inspector]
// skip; see mcpConditions.
func mcpCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mcp":       cmdMCP,
		"inspector": cmdInspector,
	}
}

// mcpConditions are the script conditions beyond testscript's built-ins:
//
//	inspector: npx can run the MCP Inspector (it is in npm's cache, or npm
//	can fetch it). Checked once per test binary.
func mcpConditions(cond string) (bool, error) {
	switch cond {
	case "inspector":
		return inspectorAvailable(), nil
	case "root":
		return os.Geteuid() == 0, nil
	}
	if name, ok := strings.CutPrefix(cond, "agent:"); ok {
		// true when installed, and always on CI (CODEX_AGENT_CLIS set),
		// where agentcli then fails for a missing one
		return os.Getenv("CODEX_AGENT_CLIS") != "" || agentBinDir(name) != "", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// inspectorPkg is the MCP Inspector release the scripts run; .ci/run
// pre-fetches the same one.
const inspectorPkg = "@modelcontextprotocol/inspector@2.12.0"

// mcpTimeout bounds one mcp command: server start, handshake and calls.
const mcpTimeout = 2 * time.Minute

// mcpEnvKeys are the variables of the script's environment the server gets
// (testscript offers no way to list them all); more with -e.
var mcpEnvKeys = []string{
	"PATH", "HOME", "TMPDIR", "WORK", "XDG_CONFIG_HOME", "USER", "LANG", "LC_ALL", "TZ",
	"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
	"CODEX_INSTANCE", "CODEX_TOKEN", "GOCOVERDIR", "SYSTEMROOT",
}

func cmdMCP(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: mcp [--as ID] [-e KEY=VAL]... list [-schemas] | call [--set VAR=PATH]... TOOL [JSON] | session FILE | pipe [-repeat N] FILE"
	var as string
	var extraEnv []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if len(args) < 2 {
			ts.Fatalf("%s", usage)
		}
		switch args[0] {
		case "--as":
			as = args[1]
		case "-e":
			if !strings.Contains(args[1], "=") {
				ts.Fatalf("mcp: -e wants KEY=VAL, got %q", args[1])
			}
			extraEnv = append(extraEnv, args[1])
		default:
			ts.Fatalf("%s", usage)
		}
		args = args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("%s", usage)
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list":
		if neg {
			ts.Fatalf("unsupported: ! mcp list")
		}
		if len(args) > 1 || (len(args) == 1 && args[0] != "-schemas") {
			ts.Fatalf("%s", usage)
		}
		withMCP(ts, as, extraEnv, func(ctx context.Context, cs *mcp.ClientSession) {
			mcpList(ts, ctx, cs, len(args) == 1)
		})
	case "call":
		c, err := parseMCPCall(args)
		if err != nil {
			ts.Fatalf("mcp call: %v\n%s", err, usage)
		}
		c.neg = neg
		withMCP(ts, as, extraEnv, func(ctx context.Context, cs *mcp.ClientSession) {
			out, _ := mcpDo(ts, ctx, cs, c, nil)
			fmt.Fprintln(ts.Stdout(), out)
		})
	case "session":
		if neg {
			ts.Fatalf("unsupported: ! mcp session (put ! on the file's lines)")
		}
		if len(args) != 1 {
			ts.Fatalf("%s", usage)
		}
		lines := strings.Split(ts.ReadFile(args[0]), "\n")
		withMCP(ts, as, extraEnv, func(ctx context.Context, cs *mcp.ClientSession) {
			vars := map[string]string{}
			for i, line := range lines {
				line = strings.TrimSpace(os.Expand(line, func(k string) string {
					if v, ok := vars[k]; ok {
						return v
					}
					return ts.Getenv(k)
				}))
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				neg := false
				if rest, ok := strings.CutPrefix(line, "!"); ok {
					neg, line = true, strings.TrimSpace(rest)
				}
				c, err := parseMCPCall(splitCallLine(line))
				if err != nil {
					ts.Fatalf("mcp session: %s:%d: %v", args[0], i+1, err)
				}
				c.neg, c.where = neg, fmt.Sprintf("%s:%d: ", args[0], i+1)
				out, ok := mcpDo(ts, ctx, cs, c, vars)
				if ok {
					fmt.Fprintf(ts.Stdout(), "%s %s\n", c.tool, out)
				}
			}
		})
	case "pipe":
		if neg {
			ts.Fatalf("unsupported: ! mcp pipe")
		}
		repeat := 1
		if len(args) == 3 && args[0] == "-repeat" {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				ts.Fatalf("%s", usage)
			}
			repeat, args = n, args[2:]
		}
		if len(args) != 1 {
			ts.Fatalf("%s", usage)
		}
		mcpPipe(ts, as, extraEnv, ts.ReadFile(args[0]), repeat)
	default:
		ts.Fatalf("%s", usage)
	}
}

// mcpPipe runs the server repeat times with input as its stdin; see
// mcpCommands.
func mcpPipe(ts *testscript.TestScript, as string, extraEnv []string, input string, repeat int) {
	want := map[string]bool{} // ids of the requests, as compact JSON
	for _, line := range strings.Split(input, "\n") {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) != nil || m["method"] == nil || m["id"] == nil || string(m["id"]) == "null" {
			continue
		}
		want[compactJSON(m["id"])] = true
	}
	var stdout, stderr bytes.Buffer
	for run := 1; run <= repeat; run++ {
		cmd := mcpCommand(ts, as, extraEnv)
		stdout.Reset()
		stderr.Reset()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(input), &stdout, &stderr
		ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
		err := runContext(ctx, cmd)
		cancel()
		fail := func(format string, args ...any) {
			ts.Fatalf("mcp pipe, run %d of %d: %s\n[stdout]\n%s[stderr]\n%s", run, repeat, fmt.Sprintf(format, args...), stdout.String(), stderr.String())
		}
		if err != nil {
			fail("the server did not exit cleanly after stdin closed: %v", err)
		}
		got := map[string]int{}
		for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				fail("a line of stdout is not a JSON object: %q", line)
			}
			if id, ok := m["id"]; ok && string(id) != "null" {
				got[compactJSON(id)]++
			}
		}
		for id := range want {
			if got[id] != 1 {
				fail("request %s got %d responses, want 1", id, got[id])
			}
		}
		for id := range got {
			if !want[id] {
				fail("a response with id %s, which no request had", id)
			}
		}
	}
	ts.Stdout().Write(stdout.Bytes())
	ts.Stderr().Write(stderr.Bytes())
}

// runContext runs cmd, killing it when ctx ends.
func runContext(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// mcpCommand is `git-codex mcp [--as ID]` in the script's directory, with
// the script's environment.
func mcpCommand(ts *testscript.TestScript, as string, extraEnv []string) *exec.Cmd {
	bin, err := lookPath("git-codex", ts.Getenv("PATH"))
	if err != nil {
		ts.Fatalf("mcp: %v", err)
	}
	argv := []string{"mcp"}
	if as != "" {
		argv = append(argv, "--as", as)
	}
	cmd := exec.Command(bin, argv...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PWD=" + cmd.Dir}
	for _, k := range mcpEnvKeys {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// withMCP starts the server, connects a client session, runs fn, closes the
// session (which closes the server's stdin) and checks the server's exit.
func withMCP(ts *testscript.TestScript, as string, extraEnv []string, fn func(context.Context, *mcp.ClientSession)) {
	cmd := mcpCommand(ts, as, extraEnv)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "git-codex-testscript", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		ts.Fatalf("mcp: connect to git-codex %s: %v\n[server stderr]\n%s", strings.Join(cmd.Args[1:], " "), err, stderr.String())
	}
	closed := false
	defer func() {
		if !closed { // fn failed the script: still stop the server
			cs.Close()
		}
	}()
	fn(ctx, cs)
	closed = true
	cerr := cs.Close()
	ts.Stderr().Write(stderr.Bytes())
	if cerr != nil {
		ts.Fatalf("mcp: server did not exit cleanly after stdin closed: %v\n[server stderr]\n%s", cerr, stderr.String())
	}
}

func mcpList(ts *testscript.TestScript, ctx context.Context, cs *mcp.ClientSession, schemas bool) {
	var lines []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			ts.Fatalf("mcp list: %v", err)
		}
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			ts.Fatalf("mcp list: %s: input schema: %v", tool.Name, err)
		}
		var s struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" {
			ts.Fatalf("mcp list: %s: input schema is not an object schema: %s", tool.Name, b)
		}
		if tool.Description == "" {
			ts.Fatalf("mcp list: %s has no description", tool.Name)
		}
		line := tool.Name
		if schemas {
			line += " " + string(b)
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(ts.Stdout(), l)
	}
}

// mcpCall is one tools/call a script asked for.
type mcpCall struct {
	tool  string
	args  json.RawMessage
	sets  [][2]string // VAR, PATH
	neg   bool        // expect isError (or a protocol error)
	where string      // "file:line: " in sessions
}

func parseMCPCall(args []string) (mcpCall, error) {
	var c mcpCall
	for len(args) > 0 && args[0] == "--set" {
		if len(args) < 2 {
			return c, errors.New("--set wants VAR=PATH")
		}
		k, v, ok := strings.Cut(args[1], "=")
		if !ok || k == "" || v == "" {
			return c, fmt.Errorf("--set wants VAR=PATH, got %q", args[1])
		}
		c.sets = append(c.sets, [2]string{k, v})
		args = args[2:]
	}
	if len(args) < 1 || len(args) > 2 {
		return c, errors.New("want TOOL [JSON]")
	}
	c.tool, c.args = args[0], json.RawMessage("{}")
	if len(args) == 2 {
		c.args = json.RawMessage(args[1])
		if !json.Valid(c.args) {
			return c, fmt.Errorf("arguments of %s are not JSON: %s", c.tool, args[1])
		}
	}
	return c, nil
}

// splitCallLine splits a session line into parseMCPCall's arguments: the
// leading words, then the rest of the line (the JSON, which may hold
// spaces) as one argument.
func splitCallLine(line string) []string {
	var out []string
	for line != "" {
		word, rest, _ := strings.Cut(line, " ")
		if strings.HasPrefix(word, "{") || strings.HasPrefix(word, "[") || strings.HasPrefix(word, "\"") {
			return append(out, line)
		}
		out = append(out, word)
		line = strings.TrimSpace(rest)
	}
	return out
}

// mcpDo runs one call and checks it; it returns the structured content as
// compact JSON, and false if there was no result (a protocol error the
// caller expected). Variables it sets go to the script and to vars.
func mcpDo(ts *testscript.TestScript, ctx context.Context, cs *mcp.ClientSession, c mcpCall, vars map[string]string) (string, bool) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		if !c.neg {
			ts.Fatalf("%smcp call %s: protocol error: %v", c.where, c.tool, err)
		}
		fmt.Fprintf(ts.Stderr(), "%s%s: protocol error: %v\n", c.where, c.tool, err)
		return "", false
	}
	out, err := json.Marshal(res.StructuredContent)
	if err != nil {
		ts.Fatalf("%smcp call %s: structured content: %v", c.where, c.tool, err)
	}
	// The envelope: {"ok":bool,...}, isError exactly when ok is false, and
	// the text content is the same envelope.
	env, ok := res.StructuredContent.(map[string]any)
	if !ok {
		ts.Fatalf("%smcp call %s: structured content is not an object: %s", c.where, c.tool, out)
	}
	if okv, isBool := env["ok"].(bool); !isBool || okv == res.IsError {
		ts.Fatalf("%smcp call %s: isError=%v with envelope %s", c.where, c.tool, res.IsError, out)
	}
	if len(res.Content) != 1 {
		ts.Fatalf("%smcp call %s: %d content blocks, want 1 (the envelope as text)", c.where, c.tool, len(res.Content))
	}
	text, isText := res.Content[0].(*mcp.TextContent)
	var fromText any
	if !isText || json.Unmarshal([]byte(text.Text), &fromText) != nil || !reflect.DeepEqual(fromText, res.StructuredContent) {
		ts.Fatalf("%smcp call %s: text content is not the structured envelope\ntext: %+v\nstructured: %s", c.where, c.tool, res.Content[0], out)
	}
	switch {
	case res.IsError && !c.neg:
		ts.Fatalf("%smcp call %s %s: unexpected isError: %s", c.where, c.tool, c.args, out)
	case !res.IsError && c.neg:
		ts.Fatalf("%smcp call %s %s: succeeded, want isError: %s", c.where, c.tool, c.args, out)
	}
	for _, s := range c.sets {
		v, ok := jsonAt(res.StructuredContent, s[1])
		if !ok {
			ts.Fatalf("%smcp call %s: --set %s=%s: no such value in %s", c.where, c.tool, s[0], s[1], out)
		}
		ts.Setenv(s[0], v)
		if vars != nil {
			vars[s[0]] = v
		}
	}
	return string(out), true
}

// jsonAt returns the value at a dotted path (object keys, array indexes):
// strings as they are, anything else as compact JSON.
func jsonAt(v any, path string) (string, bool) {
	for _, key := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[key]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	b, err := json.Marshal(v)
	return string(b), err == nil
}

// lookPath finds an executable in a PATH list (the script's, not the test
// process's).
func lookPath(name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on the script's PATH", name)
}

func cmdInspector(ts *testscript.TestScript, neg bool, args []string) {
	want := 0
	if len(args) >= 2 && args[0] == "-exit" {
		n, err := strconv.Atoi(args[1])
		if err != nil || neg {
			ts.Fatalf("usage: inspector [-exit N] ARGS... (not with !)")
		}
		want, args = n, args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: inspector [-exit N] ARGS...")
	}
	for k, v := range npmSettings() {
		if ts.Getenv(k) == "" {
			ts.Setenv(k, v)
		}
	}
	err := ts.Exec("npx", append([]string{"-y", inspectorPkg, "--cli"}, args...)...)
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("inspector: %v", err)
		}
		code = ee.ExitCode()
	}
	switch {
	case neg && code == 0:
		ts.Fatalf("inspector: exited 0, want non-zero")
	case !neg && code != want:
		ts.Fatalf("inspector: exit status %d, want %d", code, want)
	}
}

var (
	npmOnce sync.Once
	npmEnv  map[string]string
)

// npmSettings are the npm variables that make npx in a script use the test
// user's npm cache and config rather than the script's empty HOME, and the
// cache without asking the registry.
func npmSettings() map[string]string {
	npmOnce.Do(func() {
		// the scripts send HTTP to a closed proxy: npm would retry the
		// registry through it, with back-off, ~75 s a call, to revalidate
		// a package inspectorAvailable already put in the cache
		npmEnv = map[string]string{"npm_config_prefer_offline": "true", "npm_config_update_notifier": "false", "npm_config_audit": "false", "npm_config_fund": "false"}
		if v := os.Getenv("npm_config_cache"); v != "" {
			npmEnv["npm_config_cache"] = v
		} else if out, err := exec.Command("npm", "config", "get", "cache").Output(); err == nil {
			if dir := strings.TrimSpace(string(out)); dir != "" {
				npmEnv["npm_config_cache"] = dir
			}
		}
		if v := os.Getenv("npm_config_userconfig"); v != "" {
			npmEnv["npm_config_userconfig"] = v
		} else if home, err := os.UserHomeDir(); err == nil {
			if rc := filepath.Join(home, ".npmrc"); fileExists(rc) {
				npmEnv["npm_config_userconfig"] = rc
			}
		}
	})
	return npmEnv
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

var (
	inspectorOnce sync.Once
	inspectorOK   bool
)

// inspectorAvailable probes `npx -y <inspector> --help` once, with the test
// user's environment, so scripts skip when npm cannot fetch it.
func inspectorAvailable() bool {
	inspectorOnce.Do(func() {
		if _, err := exec.LookPath("npx"); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npx", "-y", inspectorPkg, "--help")
		cmd.Env = os.Environ()
		for k, v := range npmSettings() {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		inspectorOK = cmd.Run() == nil
	})
	return inspectorOK
}
