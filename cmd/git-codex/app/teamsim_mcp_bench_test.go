package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPServerMemory is issue 27's memory target: one `git codex
// mcp` server (the real binary over stdio) answering an agent's polls —
// nine inbox listings to one mail_send — with its resident memory read
// from /proc at every tenth of the run. GIT_CODEX_MCP_CALLS sets the
// number of calls (default 20,000; the target's 100,000 take ~15 minutes
// here). Each design runs in a repository of its own.
//
// GIT_CODEX_MCP_BASE_BIN names another build (say, main's) to measure
// side by side: its server gets the same calls in a repository of its own,
// interleaved call by call with this build's, so both see the same load of
// the moment. Each checkpoint reports, besides VmRSS split by kind, the
// open descriptors, the mappings of deleted files (a pack git's repack
// removed that the server still holds), the resident size of the mapped
// pack indexes and packs, the mean time of a call since the last
// checkpoint, and the mean and peak of VmRSS sampled every rssEvery calls
// over the tenth (one reading moves with the Go heap's swing between
// collections; rss-second-tenth-mean-MB and rss-last-tenth-mean-MB compare
// tenths, not two instants: the first tenth's mean holds the server's
// start, its binary's pages still being read).
//
// GIT_CODEX_MCP_HEAP_DIR=<dir> builds this build's server with the
// codex_memdump tag (cmd/git-codex/memdump.go) and, at every checkpoint,
// after /proc is read, has it write a heap profile and the runtime's
// memory classes into <dir>/<design>/ (heap-<n>.pprof, mem-<n>.txt, n the
// tenth): the checkpoint's line then also splits the anonymous memory
// into the Go heap's live objects, its free pages still held, goroutine
// stacks and the runtime's own structures. Compare two profiles with `go
// tool pprof -base heap-1.pprof heap-10.pprof`.
func BenchmarkMCPServerMemory(b *testing.B) {
	calls := 20_000
	if v := os.Getenv("GIT_CODEX_MCP_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			b.Fatalf("GIT_CODEX_MCP_CALLS=%q", v)
		}
		calls = n
	}
	heapDir := os.Getenv("GIT_CODEX_MCP_HEAP_DIR")
	if heapDir != "" {
		b.Setenv("GIT_CODEX_BUILD_TAGS", strings.Trim(os.Getenv("GIT_CODEX_BUILD_TAGS")+",codex_memdump", ","))
	}
	bins := []struct{ name, path string }{{"this", buildBinary(b)}}
	if base := os.Getenv("GIT_CODEX_MCP_BASE_BIN"); base != "" {
		bins = append(bins, struct{ name, path string }{"base", base})
	}
	ctx := context.Background()
	for _, d := range simDesigns {
		if d.retain || !simDesignWanted(d.name) {
			continue // retention changes nothing one server does
		}
		b.Run("design="+d.name, func(b *testing.B) {
			type server struct {
				name string
				cmd  *exec.Cmd
				cs   *mcp.ClientSession
				rss  []string
				busy time.Duration // time in calls since the last checkpoint
				// VmRSS sampled every rssEvery calls since the last
				// checkpoint, in KiB: its sum, count and highest
				sampled, samples, peak int
			}
			var servers []*server
			for _, bin := range bins {
				dir := benchRepo(b)
				if d.readsOnState {
					gitstatetest.ReadsOnState(b, dir)
				}
				cmd := exec.Command(bin.path, "mcp", "--as", "alice")
				cmd.Dir, cmd.Env, cmd.Stderr = dir, benchEnv(), os.Stderr
				if heapDir != "" && bin.name == "this" {
					dump := filepath.Join(heapDir, d.name)
					if err := os.MkdirAll(dump, 0o777); err != nil {
						b.Fatal(err)
					}
					cmd.Env = append(cmd.Env, "GIT_CODEX_MEMDUMP_DIR="+dump)
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				servers = append(servers, &server{name: bin.name, cmd: cmd, cs: cs})
			}
			send := json.RawMessage(`{"to":"boss","subject":"status","body":"still working on the parser"}`)
			for i := 1; i <= calls; i++ {
				name, args := "mail_list_inbox", json.RawMessage(`{}`)
				if i%10 == 0 {
					name, args = "mail_send", send
				}
				for _, s := range servers {
					start := time.Now()
					res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
					s.busy += time.Since(start)
					if err != nil || res.IsError {
						b.Fatalf("%s (%s): %v %v", name, s.name, err, res)
					}
					pid := s.cmd.Process.Pid
					if i%rssEvery == 0 {
						kb := residentKB(b, pid)
						s.sampled, s.samples, s.peak = s.sampled+kb, s.samples+1, max(s.peak, kb)
					}
					if i%(calls/10) != 0 {
						continue
					}
					kb := residentKB(b, pid)
					mean := float64(kb)
					if s.samples > 0 {
						mean = float64(s.sampled) / float64(s.samples)
					}
					s.rss = append(s.rss, fmt.Sprintf("%d:%dMB(%s; tenth's mean %.2f MB, peak %.2f MB; %s; %.2f ms a call)", i, kb/1024, residentSplit(b, pid),
						mean/1024, float64(max(s.peak, kb))/1024, mappedFiles(pid), ms(s.busy)/float64(calls/10)))
					s.busy, s.sampled, s.samples, s.peak = 0, 0, 0, 0
					if s.name != "this" {
						continue
					}
					if heapDir != "" {
						s.rss[len(s.rss)-1] += "\n    " + memDump(b, s.cmd, filepath.Join(heapDir, d.name), i/(calls/10))
					}
					if i == calls/10 {
						b.ReportMetric(float64(kb)/1024, "rss-first-tenth-MB")
					}
					if i == 2*calls/10 {
						// the second tenth: the first's mean holds the start
						b.ReportMetric(mean/1024, "rss-second-tenth-mean-MB")
					}
					if i == calls {
						b.ReportMetric(float64(kb)/1024, "rss-end-MB")
						b.ReportMetric(mean/1024, "rss-last-tenth-mean-MB")
					}
				}
			}
			for _, s := range servers {
				fmt.Fprintf(os.Stderr, "design=%s build=%s mcp server resident memory by calls:\n  %s\n", d.name, s.name, strings.Join(s.rss, "\n  "))
			}
		})
	}
}

// memDump has a server built with the codex_memdump tag write its heap
// profile and memory classes for checkpoint n into dir (SIGUSR1, see
// cmd/git-codex/memdump.go), waits for them, and sums up the classes in
// MB: the heap's live objects, its free pages still held (and, not
// counted in RSS, those returned), stacks, the runtime's metadata and
// other structures, the profiler's buckets; and the goroutines.
func memDump(b *testing.B, cmd *exec.Cmd, dir string, n int) string {
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, fmt.Sprintf("mem-%d.txt", n))
	var raw []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if raw, err = os.ReadFile(file); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("no %s: %v", file, err)
		}
	}
	v := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		if name, num, ok := strings.Cut(line, " "); ok {
			n, _ := strconv.ParseUint(num, 10, 64)
			v[name] = float64(n)
		}
	}
	mb := func(names ...string) float64 {
		var sum float64
		for _, n := range names {
			sum += v["/memory/classes/"+n+":bytes"]
		}
		return sum / (1 << 20)
	}
	return fmt.Sprintf("go: heap live %.2f, heap free held %.2f (returned %.2f), stacks %.2f, metadata %.2f, other %.2f, profiling %.2f, total held %.2f; goal %.2f MB; goroutines %.0f",
		mb("heap/objects"), mb("heap/free", "heap/unused"), mb("heap/released"), mb("heap/stacks", "os-stacks"),
		mb("metadata/mcache/free", "metadata/mcache/inuse", "metadata/mspan/free", "metadata/mspan/inuse", "metadata/other"),
		mb("other"), mb("profiling/buckets"), mb("total")-mb("heap/released"), v["/gc/heap/goal:bytes"]/(1<<20), v["/sched/goroutines:goroutines"])
}

// rssEvery is how often, in calls, BenchmarkMCPServerMemory samples a
// server's VmRSS between checkpoints: a single reading moves by the Go
// heap's swing between collections (the live heap to twice it), so each
// tenth also reports the mean and the peak of its samples.
const rssEvery = 100

// mappedFiles sums up what a process holds of files, from /proc/<pid>/fd
// and /proc/<pid>/smaps: its open descriptors, its mappings of deleted
// files, and the resident kB of the pack indexes (.idx) and packs it maps.
func mappedFiles(pid int) string {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	var deleted, idxMaps, idxKB, binKB int
	var cur string
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			cur = ""
			if len(f) >= 6 {
				cur = strings.Join(f[5:], " ")
			}
			if strings.HasSuffix(cur, "(deleted)") {
				deleted++
			}
			if strings.Contains(cur, "/objects/pack/") {
				idxMaps++
			}
			continue
		}
		if len(f) == 3 && f[0] == "Rss:" {
			n, _ := strconv.Atoi(f[1])
			switch {
			case strings.Contains(cur, "/objects/pack/"):
				idxKB += n
			case strings.HasSuffix(cur, "git-codex"):
				binKB += n
			}
		}
	}
	return fmt.Sprintf("fds %d, deleted maps %d, pack maps %d (%d kB), binary %d kB", len(fds), deleted, idxMaps, idxKB, binKB)
}

// residentKB is a process's resident set size (VmRSS) in KiB.
func residentKB(b *testing.B, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err == nil {
				return n
			}
		}
	}
	b.Fatalf("no VmRSS for %d", pid)
	return 0
}

// residentSplit is a process's resident memory by kind, from
// /proc/<pid>/status: anonymous (the heap, stacks: what the process
// allocated), file-backed (mapped files: its binary, and the pack indexes
// gitstate maps, pages the kernel may drop and read again) and shared.
func residentSplit(b *testing.B, pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	var parts []string
	for _, line := range strings.Split(string(raw), "\n") {
		for _, k := range []string{"RssAnon", "RssFile", "RssShmem"} {
			if v, ok := strings.CutPrefix(line, k+":"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				parts = append(parts, fmt.Sprintf("%s %.1f", strings.TrimPrefix(k, "Rss"), float64(n)/1024))
			}
		}
	}
	return strings.Join(parts, " ")
}
