package instance

import (
	"context"
	"time"

	"github.com/gitcodex/git-codex/tmux"
)

// A launcher that is up when started (ReadyStarted) is watched for an
// agent that exits at once (a wrong flag, no login) until its pane's
// processes got going: all of them asleep, waiting for something, in two
// looks startLook apart (tmux.PaneAsleep), or the pane dead. A fixed wait
// (150 ms) was too short on a loaded machine, where `sh -c 'echo; exit
// 3'` had not run yet when it ended; an agent that waits for its input is
// seen so within a few looks, sooner than that wait.
const (
	// startLook is how often the pane is looked at.
	startLook = 20 * time.Millisecond
	// startCheckMax bounds the watch, for an agent that keeps running
	// without ever waiting (it is then taken as started).
	startCheckMax = 3 * time.Second
	// startCheck is how long the pane is watched where there is no process
	// table to look at.
	startCheck = 150 * time.Millisecond
)

// watchStart watches a fresh pane until its agent is waiting or dead
// (above), and returns the session as last seen.
func watchStart(ctx context.Context, r tmux.Runner, session string) (tmux.Session, error) {
	begun := time.Now()
	prev := ""
	for {
		s, err := Pane(ctx, r, session)
		if err != nil || s.PaneDead {
			return s, err
		}
		set, asleep, known := tmux.PaneAsleep(s.PanePID)
		switch {
		case !known && time.Since(begun) >= startCheck:
			return s, nil
		case asleep && set == prev:
			return s, nil
		case time.Since(begun) >= startCheckMax:
			return s, nil
		}
		prev = ""
		if asleep {
			prev = set
		}
		select {
		case <-ctx.Done():
			return s, nil
		case <-time.After(startLook):
		}
	}
}
