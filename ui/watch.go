package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// maxBurst bounds the commits one look at the ref reports one by one; a
// longer run (a sync that brought thousands) is reported by its newest
// maxBurst, and the page reloads its state either way.
const maxBurst = 200

// streamBuffer is how many events a slow page may fall behind before its
// stream is ended (the page reconnects and reloads).
const streamBuffer = 64

// hub watches the state ref and fans its new commits out to the open event
// streams. The watch is a stat of the ref's loose file and of packed-refs
// (no git process, no database): only when one of them changed is the tip
// read, and only a new tip is walked.
type hub struct {
	st    *gitstate.Store
	every time.Duration
	max   int

	mu     sync.Mutex
	subs   map[chan eventJSON]struct{}
	closed bool
}

func newHub(st *gitstate.Store, every time.Duration, max int) *hub {
	return &hub{st: st, every: every, max: max, subs: map[chan eventJSON]struct{}{}}
}

// errTooManyStreams refuses a stream past MaxStreams.
var errTooManyStreams = errors.New("too many open event streams")

// subscribe returns a channel of new commits and its cancel. The channel
// is closed when the stream falls behind or the server closes.
func (h *hub) subscribe() (chan eventJSON, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errors.New("server closed")
	}
	if len(h.subs) >= h.max {
		return nil, nil, errTooManyStreams
	}
	ch := make(chan eventJSON, streamBuffer)
	h.subs[ch] = struct{}{}
	return ch, func() { h.drop(ch) }, nil
}

func (h *hub) drop(ch chan eventJSON) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

// streams is the number of open event streams.
func (h *hub) streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}

// publish sends events to every stream, ending the streams that cannot
// take them.
func (h *hub) publish(evs []eventJSON) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		for _, ev := range evs {
			select {
			case ch <- ev:
				continue
			default:
			}
			delete(h.subs, ch)
			close(ch)
			break
		}
	}
}

// stamp is what the watch compares between looks: the ref file's and
// packed-refs' identity, size and modification time.
type stamp [2]fileStamp

type fileStamp struct {
	ok    bool
	size  int64
	mtime time.Time
	ino   uint64
}

func (h *hub) stamp() stamp {
	dir := h.st.GitDir()
	return stamp{statFile(filepath.Join(dir, filepath.FromSlash(gitstate.RefState))), statFile(filepath.Join(dir, "packed-refs"))}
}

func statFile(p string) fileStamp {
	fi, err := os.Stat(p)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{ok: true, size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi)}
}

// watch looks at the ref every h.every until ctx ends and publishes the
// commits that arrived since the last look, oldest first.
func (h *hub) watch(ctx context.Context) {
	last := h.stamp()
	tip := h.tip(ctx)
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := h.stamp()
		if now == last {
			continue
		}
		last = now
		newTip := h.tip(ctx)
		if newTip == "" || newTip == tip {
			continue
		}
		h.publish(h.since(ctx, tip, newTip))
		tip = newTip
	}
}

// tip is the state ref's commit, "" when there is none (or it cannot be
// read right now: the next look tries again).
func (h *hub) tip(ctx context.Context) string {
	ev, err := h.st.Event(ctx, "")
	if err != nil {
		return ""
	}
	return ev.Commit
}

// since lists the commits reachable from newTip and not yet reported
// (walking back to old), oldest first, at most maxBurst.
func (h *hub) since(ctx context.Context, old, newTip string) []eventJSON {
	var evs []eventJSON
	h.st.Events(ctx, newTip, func(ev gitstate.Event) bool {
		if ev.Commit == old {
			return false
		}
		evs = append(evs, eventOf(ev))
		return len(evs) < maxBurst
	})
	slices.Reverse(evs)
	return evs
}

// inode is a file's inode number: a ref moved by rename is a new file even
// when its size and time happen to match the old one's.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
