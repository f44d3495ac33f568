//go:build codex_memdump

package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
)

// A build for measurement only (`go build -tags codex_memdump`; never
// shipped): BenchmarkMCPServerMemory builds the server so when
// GIT_CODEX_MCP_HEAP_DIR is set, to see inside the real process (its
// stdio transport, its background repacks, its log) what the in-process
// BenchmarkMCPServerHeap cannot. On SIGUSR1 the process collects, then
// writes into $GIT_CODEX_MEMDUMP_DIR heap-<n>.pprof (allocation sites of
// what is live) and mem-<n>.txt (the runtime's memory classes: live heap,
// free heap not yet returned, stacks, the runtime's own metadata,
// profiling buckets), n counting the signals from 1. mem-<n>.txt is
// renamed into place last, so a reader that sees it sees both.
func init() {
	dir := os.Getenv("GIT_CODEX_MEMDUMP_DIR")
	if dir == "" {
		return
	}
	runtime.MemProfileRate = 4096 // what grows is small: a sample every 4 KiB
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for n := 1; ; n++ {
			<-sig
			if err := memDump(dir, n); err != nil {
				fmt.Fprintln(os.Stderr, "memdump:", err)
			}
		}
	}()
}

// memDump writes the n-th heap profile and memory classes into dir.
func memDump(dir string, n int) error {
	runtime.GC()
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", n)))
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/sched/goroutines:goroutines" || d.Name == "/gc/heap/goal:bytes" || d.Name == "/gc/cycles/total:gc-cycles" {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	var b strings.Builder
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		}
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".mem-%d.txt", n))
	if err := os.WriteFile(tmp, []byte(b.String()), 0o666); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("mem-%d.txt", n)))
}
