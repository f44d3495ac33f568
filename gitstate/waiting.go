package gitstate

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Taking turns on a busy remote. A remote accepts only fast-forwards, so a
// clone that writes and syncs without pause can win every race: its cycle
// is shorter than another clone's fetch-merge-push round, and that clone's
// push is rejected round after round, backoff or not. So a sync whose push
// was rejected says that it is waiting: it pushes a ref
// refs/codex/waiting/<milliseconds>-<random> (pointing at the remote's own
// state, so nothing is uploaded) and deletes it when it is done. Every sync
// lists these refs with the state; one that finds an older waiter than
// itself holds back its own push, polling, until the waiter is done (at
// most maxYield per sync). A waiter older than waitingTTL is taken for one
// that died and ignored.
const (
	waitingPrefix = "refs/codex/waiting/"
	waitingTTL    = 30 * time.Second
	maxYield      = 15 * time.Second
)

// waiter is one sync's part in taking turns.
type waiter struct {
	name    string        // our waiting ref, once announced
	yielded time.Duration // time spent letting others go first
}

// announce pushes our waiting ref (once), pointing at state, the remote's
// state commit. A remote that refuses it only loses us our turn.
func (w *waiter) announce(ctx context.Context, s *Store, remote, state string) {
	if w.name != "" || state == "" {
		return
	}
	// named before the push: a push cut short by the context may still
	// have landed, and leave must then delete it
	w.name = fmt.Sprintf("%s%013d-%06d", waitingPrefix, time.Now().UnixMilli(), rand.IntN(1000000))
	_ = s.git(ctx, nil, "push", "--quiet", remote, state+":"+w.name)
}

// leave deletes our waiting ref, if we pushed one (best effort, even when
// the sync's context is done: a ref left behind expires).
func (w *waiter) leave(s *Store, remote string) {
	if w.name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.git(ctx, nil, "push", "--quiet", remote, ":"+w.name)
	w.name = ""
}

// yield reports whether an older waiter than us is listed in adv: then it
// pauses a moment (the caller fetches again) and returns true, until
// maxYield is spent.
func (w *waiter) yield(ctx context.Context, adv advertised, remote string, progress io.Writer) bool {
	if w.yielded >= maxYield {
		return false
	}
	now := time.Now()
	for ref := range adv {
		name, ok := strings.CutPrefix(ref, waitingPrefix)
		if !ok || ref == w.name || (w.name != "" && ref > w.name) {
			continue
		}
		ms, err := strconv.ParseInt(strings.SplitN(name, "-", 2)[0], 10, 64)
		if err != nil {
			continue
		}
		if age := now.Sub(time.UnixMilli(ms)); age > waitingTTL || age < -waitingTTL {
			continue // a waiter that died, or a clock far off
		}
		pause := 200*time.Millisecond + rand.N(200*time.Millisecond)
		if w.yielded == 0 && progress != nil {
			fmt.Fprintf(progress, "git codex: another clone is waiting to sync with %s; letting it go first\n", remote)
		}
		w.yielded += pause
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
		return true
	}
	return false
}
