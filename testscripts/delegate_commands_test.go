package testscripts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// delegateCommands are the script commands of the delegation scripts:
//
//	mcpstream [--as ID] [-e KEY=VAL]... [-disconnect] TOOL JSON
//	    calls TOOL through `git-codex mcp` with the go-sdk client, asking
//	    for progress (a progress token), and prints each progress
//	    notification as "progress N MESSAGE" and then the result's
//	    structured content. With -disconnect the client closes the
//	    connection once the first notification came, and waits for the
//	    server to exit (it must, with status 0), printing "disconnected".
//
//	procsgone FILE
//	    fails unless every process whose pid FILE's JSON lines name
//	    ("pid", as the fake agents log them) has exited: no orphan is left
//	    running (a zombie counts as running: nobody reaped it).
func delegateCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mcpstream": cmdMCPStream,
		"procsgone": cmdProcsGone,
	}
}

func cmdMCPStream(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: mcpstream [--as ID] [-e KEY=VAL]... [-disconnect] TOOL JSON"
	if neg {
		ts.Fatalf("unsupported: ! mcpstream")
	}
	var as string
	var extraEnv []string
	disconnect := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-disconnect":
			disconnect, args = true, args[1:]
		case args[0] == "--as" && len(args) > 1:
			as, args = args[1], args[2:]
		case args[0] == "-e" && len(args) > 1:
			extraEnv, args = append(extraEnv, args[1]), args[2:]
		default:
			ts.Fatalf("%s", usage)
		}
	}
	if len(args) != 2 {
		ts.Fatalf("%s", usage)
	}
	cmd := mcpCommand(ts, as, extraEnv)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
	defer cancel()
	first := make(chan struct{}, 1)
	var lines []string
	lineCh := make(chan string, 1000)
	client := mcp.NewClient(&mcp.Implementation{Name: "git-codex-testscript", Version: "v0.0.1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			lineCh <- fmt.Sprintf("progress %v %s", req.Params.Progress, req.Params.Message)
			select {
			case first <- struct{}{}:
			default:
			}
		},
	})
	// the server's pipes are the script's own, so -disconnect can hang up
	// the way a client that dies does: stdin closed, nothing more said
	stdin, err := cmd.StdinPipe()
	if err != nil {
		ts.Fatalf("mcpstream: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		ts.Fatalf("mcpstream: %v", err)
	}
	if err := cmd.Start(); err != nil {
		ts.Fatalf("mcpstream: start the server: %v", err)
	}
	defer cmd.Process.Kill()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		ts.Fatalf("mcpstream: connect: %v\n%s", err, stderr.String())
	}
	params := &mcp.CallToolParams{Name: args[0], Arguments: json.RawMessage(args[1])}
	params.SetProgressToken("stream-1")
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, params)
		done <- answer{res, err}
	}()
	if disconnect {
		select {
		case <-first:
		case a := <-done:
			cs.Close()
			ts.Fatalf("mcpstream: the call ended before any progress: %v %v", a.res, a.err)
		}
		stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				ts.Fatalf("mcpstream: server did not exit cleanly after the client went: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			ts.Fatalf("mcpstream: server still running 30 s after its client went\n%s", stderr.String())
		}
		fmt.Fprintln(ts.Stdout(), "disconnected")
		ts.Stderr().Write(stderr.Bytes())
		return
	}
	a := <-done
	cerr := cs.Close()
	if cerr == nil {
		cerr = cmd.Wait()
	}
	close(lineCh)
	for l := range lineCh {
		lines = append(lines, l)
	}
	for _, l := range lines {
		fmt.Fprintln(ts.Stdout(), l)
	}
	if a.err != nil {
		ts.Fatalf("mcpstream: %v\n%s", a.err, stderr.String())
	}
	b, _ := json.Marshal(a.res.StructuredContent)
	fmt.Fprintln(ts.Stdout(), string(b))
	ts.Stderr().Write(stderr.Bytes())
	if cerr != nil {
		ts.Fatalf("mcpstream: server did not exit cleanly: %v", cerr)
	}
}

func cmdProcsGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: procsgone FILE")
	}
	n := 0
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		var rec struct {
			PID int `json:"pid"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.PID == 0 {
			continue
		}
		n++
		// give a killed process a moment to be reaped by its parent
		deadline := time.Now().Add(5 * time.Second)
		for alive(rec.PID) {
			if time.Now().After(deadline) {
				ts.Fatalf("process %d is still running (an orphan)", rec.PID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if n == 0 {
		ts.Fatalf("procsgone: %s names no process", args[0])
	}
}

// alive reports whether pid is in the process table, zombies included.
func alive(pid int) bool {
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		return true
	}
	return syscall.Kill(pid, 0) == nil
}
