package testscripts

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fakeClaudeHeadless stands in for Claude Code's print mode, keeping the
// contract of `claude -p` that delegation relies on:
//
//	claude -p [--output-format text|json|stream-json] [--verbose]
//	       [--resume <session-id>] [--session-id <uuid>] [--model <m>]
//	       [--max-turns <n>] [--permission-mode <mode>]
//	       [--allowedTools <t>...] [--disallowedTools <t>...]
//	       [--mcp-config <file>]... [prompt]
//
// The prompt is the positional argument, else standard input. stream-json
// needs --verbose (as claude says: "When using --print,
// --output-format=stream-json requires --verbose"); unknown options and
// bad values exit 1 with a message on stderr. stream-json prints one JSON
// object a line: system/init (session_id, cwd, model, permissionMode,
// tools, mcp_servers), then per turn an assistant message with a tool_use
// block (Glob) and the user message carrying its tool_result, then an
// assistant text message, each with usage; finally the result (subtype
// success or error_max_turns, is_error, result, session_id,
// total_cost_usd, num_turns, usage). json prints the result object alone.
// SIGINT ends it at once with status 130 and no result.
//
// The environment steers it:
//
//	FAKE_CLAUDE_LOG      append one JSON line per run: args, pid, cwd, prompt
//	FAKE_CLAUDE_TURNS    agent turns to take (default 1)
//	FAKE_CLAUDE_DELAY    pause before each message (a Go duration)
//	FAKE_CLAUDE_TOKENS   output tokens per assistant message (default 20)
//	FAKE_CLAUDE_EXIT     exit with this status after printing "boom" on stderr, before any output
//	FAKE_CLAUDE_GARBAGE  print this non-JSON line first
//	FAKE_CLAUDE_ANSWER   answer this instead of echoing the prompt, e.g. what `env` printed
//	FAKE_CLAUDE_TOOL_BYTES  each tool result holds this many bytes (x), on one line
//	FAKE_CLAUDE_SPAWN    a shell command started in the background first, as a tool the agent runs (a server) would be
func fakeClaudeHeadless(args []string) int {
	format, verbose := "text", false
	var resume, sessionID, model, mode, prompt string
	maxTurns := 0
	modes := []string{"default", "acceptEdits", "bypassPermissions", "dontAsk", "plan"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, bool) {
			if i+1 >= len(args) {
				fmt.Fprintf(os.Stderr, "error: option '%s' argument missing\n", a)
				return "", false
			}
			i++
			return args[i], true
		}
		var ok = true
		switch a {
		case "-p", "--print":
		case "--verbose":
			verbose = true
		case "--output-format":
			format, ok = value()
			if ok && !slices.Contains([]string{"text", "json", "stream-json"}, format) {
				fmt.Fprintf(os.Stderr, "error: option '--output-format <format>' argument '%s' is invalid. Allowed choices are text, json, stream-json.\n", format)
				return 1
			}
		case "--resume", "-r":
			resume, ok = value()
		case "--session-id":
			sessionID, ok = value()
		case "--model":
			model, ok = value()
		case "--max-turns":
			var v string
			if v, ok = value(); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					fmt.Fprintf(os.Stderr, "error: --max-turns must be a positive integer, got %q\n", v)
					return 1
				}
				maxTurns = n
			}
		case "--permission-mode":
			if mode, ok = value(); ok && !slices.Contains(modes, mode) {
				fmt.Fprintf(os.Stderr, "error: option '--permission-mode <mode>' argument '%s' is invalid. Allowed choices are %s.\n", mode, strings.Join(modes, ", "))
				return 1
			}
		case "--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools":
			_, ok = value()
		case "--mcp-config":
			var f string
			if f, ok = value(); ok {
				if err := checkMCPConfig(f); err != nil {
					fmt.Fprintf(os.Stderr, "Error: Invalid MCP configuration: %v\n", err)
					return 1
				}
			}
		default:
			if strings.HasPrefix(a, "-") {
				fmt.Fprintf(os.Stderr, "error: unknown option '%s'\n", a)
				return 1
			}
			prompt = a
		}
		if !ok {
			return 1
		}
	}
	if format == "stream-json" && !verbose {
		fmt.Fprintln(os.Stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return 1
	}
	if prompt == "" {
		b, _ := io.ReadAll(os.Stdin)
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		fmt.Fprintln(os.Stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return 1
	}
	cwd, _ := os.Getwd()
	if log := os.Getenv("FAKE_CLAUDE_LOG"); log != "" {
		rec, _ := json.Marshal(map[string]any{"args": args, "pid": os.Getpid(), "cwd": cwd, "prompt": prompt})
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err == nil {
			f.Write(append(rec, '\n'))
			f.Close()
		}
	}
	if spawn := os.Getenv("FAKE_CLAUDE_SPAWN"); spawn != "" {
		exec.Command("sh", "-c", spawn).Run()
	}
	if code := os.Getenv("FAKE_CLAUDE_EXIT"); code != "" {
		n, _ := strconv.Atoi(code)
		fmt.Fprintln(os.Stderr, "boom")
		return n
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	go func() {
		<-sigs
		os.Exit(130)
	}()
	switch {
	case resume != "":
		sessionID = resume
	case sessionID == "":
		sessionID = newUUID()
	}
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	if mode == "" {
		mode = "default"
	}
	turns, _ := strconv.Atoi(os.Getenv("FAKE_CLAUDE_TURNS"))
	if turns <= 0 {
		turns = 1
	}
	tokens, _ := strconv.Atoi(os.Getenv("FAKE_CLAUDE_TOKENS"))
	if tokens <= 0 {
		tokens = 20
	}
	delay, _ := time.ParseDuration(os.Getenv("FAKE_CLAUDE_DELAY"))
	out := bufio.NewWriter(os.Stdout)
	emit := func(m map[string]any) {
		if delay > 0 {
			out.Flush()
			time.Sleep(delay)
		}
		m["session_id"] = sessionID
		m["uuid"] = newUUID()
		if format == "stream-json" {
			b, _ := json.Marshal(m)
			out.Write(append(b, '\n'))
			out.Flush()
		}
	}
	if g := os.Getenv("FAKE_CLAUDE_GARBAGE"); g != "" {
		fmt.Fprintln(out, g)
		out.Flush()
	}
	emit(map[string]any{"type": "system", "subtype": "init", "cwd": cwd, "model": model, "permissionMode": mode,
		"tools": []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write"}, "mcp_servers": []any{}, "apiKeySource": "none", "output_style": "default"})
	usage := map[string]any{"input_tokens": 10, "output_tokens": tokens}
	first, _, _ := strings.Cut(prompt, "\n")
	answer := fmt.Sprintf("fake-claude (%s, %s) answered: %s", model, mode, first)
	if a := os.Getenv("FAKE_CLAUDE_ANSWER"); a != "" {
		answer = a
	}
	done, n := 0, 0
	for done < turns {
		if maxTurns > 0 && n >= maxTurns {
			break
		}
		id := fmt.Sprintf("toolu_%02d", done)
		emit(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": model,
			"content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Glob", "input": map[string]any{"pattern": "**/*.go"}}}, "stop_reason": "tool_use", "usage": usage}})
		if big, _ := strconv.ParseInt(os.Getenv("FAKE_CLAUDE_TOOL_BYTES"), 10, 64); big > 0 && format == "stream-json" {
			// a tool result holding a big file: one line, written as it
			// is made (never held whole)
			fmt.Fprintf(out, `{"type":"user","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"`, id)
			chunk := []byte(strings.Repeat("x", 64<<10))
			for n := big; n > 0; n -= int64(len(chunk)) {
				out.Write(chunk[:min(n, int64(len(chunk)))])
			}
			fmt.Fprintf(out, `"}]},"session_id":%q}`+"\n", sessionID)
			out.Flush()
		} else {
			emit(map[string]any{"type": "user", "parent_tool_use_id": nil, "message": map[string]any{"role": "user",
				"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": filepath.Base(cwd) + "/main.go"}}}})
		}
		n++
		text := fmt.Sprintf("step %d of %d", done+1, turns)
		if done+1 == turns {
			text = answer
		}
		emit(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": fmt.Sprintf("msg_t%02d", done), "type": "message", "role": "assistant", "model": model,
			"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": "end_turn", "usage": usage}})
		n++
		done++
	}
	// the result's usage is the turn's, summed over its model calls (as
	// claude's is: testdata/streams/claude-tool.jsonl in package tools)
	total := map[string]any{"input_tokens": 10 * n, "output_tokens": tokens * n}
	result := map[string]any{"type": "result", "subtype": "success", "is_error": false, "duration_ms": 12, "duration_api_ms": 10, "num_turns": n,
		"result": answer, "total_cost_usd": 0.0012 * float64(n), "usage": total, "permission_denials": []any{}}
	code := 0
	if done < turns {
		result["subtype"], result["is_error"] = "error_max_turns", true
		delete(result, "result")
		code = 1
	}
	emit(result)
	if format == "json" {
		result["session_id"] = sessionID
		b, _ := json.Marshal(result)
		out.Write(append(b, '\n'))
	} else if format == "text" {
		fmt.Fprintln(out, answer)
	}
	out.Flush()
	return code
}

// newUUID is a random (version 4) UUID, the shape of claude's session ids.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
