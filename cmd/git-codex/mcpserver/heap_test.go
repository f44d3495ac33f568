package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPServerHeap finds what grows in one MCP server per call (issue
// 27's memory target): BenchmarkMCPServerMemory's calls (nine inbox polls
// to one mail_send, as alice, reads on the machine's reads refs) against
// the server in-process over go-sdk's in-memory transport, writing a heap
// profile (after a GC) and the process's memory figures at
// GIT_CODEX_MCP_HEAP_AT (comma-separated call counts, default
// 2000,10000,30000) into GIT_CODEX_MCP_HEAP_DIR. Compare two profiles with
// `go tool pprof -base heap-10000.pprof heap-30000.pprof`.
func BenchmarkMCPServerHeap(b *testing.B) {
	out := os.Getenv("GIT_CODEX_MCP_HEAP_DIR")
	if out == "" {
		b.Skip("set GIT_CODEX_MCP_HEAP_DIR")
	}
	at := []int{2000, 10000, 30000}
	if v := os.Getenv("GIT_CODEX_MCP_HEAP_AT"); v != "" {
		at = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			at = append(at, n)
		}
	}
	// a sample every 4 KiB allocated, not 512: what grows is small
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	runtime.MemProfileRate = 4096
	dir := mcpRepo(b)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := New(builtin.Registry(), st, tools.Origin{ID: "alice"}, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ct, stt := mcp.NewInMemoryTransports()
	go srv.run(ctx, stt)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	send := json.RawMessage(`{"to":"boss","subject":"status","body":"still working on the parser"}`)
	last := at[len(at)-1]
	for i := 1; i <= last; i++ {
		name, args := "mail_list_inbox", json.RawMessage(`{}`)
		if i%10 == 0 {
			name, args = "mail_send", send
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
		for _, n := range at {
			if i != n {
				continue
			}
			runtime.GC()
			f, err := os.Create(filepath.Join(out, fmt.Sprintf("heap-%d.pprof", n)))
			if err != nil {
				b.Fatal(err)
			}
			pprof.WriteHeapProfile(f)
			f.Close()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			maps, _ := os.ReadFile("/proc/self/maps")
			status, _ := os.ReadFile("/proc/self/status")
			rss := ""
			for _, l := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(l, "VmRSS:") {
					rss = strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
				}
			}
			packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
			fmt.Fprintf(os.Stderr, "calls %d: heap in use %.1f MB, heap objects %d, sys %.1f MB, rss %s, mappings %d (of .idx/.pack: %d), packs on disk %d, goroutines %d\n",
				n, float64(ms.HeapInuse)/(1<<20), ms.HeapObjects, float64(ms.Sys)/(1<<20), rss, strings.Count(string(maps), "\n"),
				strings.Count(string(maps), ".idx")+strings.Count(string(maps), ".pack"), len(packs), runtime.NumGoroutine())
		}
	}
}
