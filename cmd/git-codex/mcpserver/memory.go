package mcpserver

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// An agent's MCP server lives as long as its agent and answers a call every
// few seconds; what it holds between calls is a couple of MB of live heap
// (GODEBUG=gctrace=1: 2-3 MB after each collection, flat to 40k calls).
// The Go runtime keeps the pages a collection freed and returns them to
// the system slowly, in the background, and under CPU load it falls behind.
// So after a call, at most once every memoryReturnEvery, the server gives
// back what it does not use (a collection of a 2 MB heap: a millisecond).
// Time-based, not counted in calls, so it does not follow a benchmark's
// checkpoints. (It was first written for the late step in issue 27's
// 100k-call runs, 8.6 to 11.8 MB of anonymous memory, and did not remove
// it: that was live heap, the store's compressor, gone since; see
// gitstate/internal/gitrepo/deflate.go.)

// memoryReturnEvery is how often, at most, the server returns freed memory.
const memoryReturnEvery = 30 * time.Second

// memoryReturner returns freed memory to the system at most once per
// memoryReturnEvery.
type memoryReturner struct {
	last atomic.Int64 // unix nanoseconds of the last return; 0: none yet
}

// after is called when a call has been answered; it reports whether it
// started a return (in a goroutine of its own: the answer does not wait).
func (m *memoryReturner) after(now time.Time) bool {
	last := m.last.Load()
	if last == 0 {
		m.last.CompareAndSwap(0, now.UnixNano()) // counted from the first call
		return false
	}
	if now.Sub(time.Unix(0, last)) < memoryReturnEvery || !m.last.CompareAndSwap(last, now.UnixNano()) {
		return false
	}
	go debug.FreeOSMemory()
	return true
}
