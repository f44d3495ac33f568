package instance

import (
	"context"
	"errors"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// PeekIn is peek's input.
type PeekIn struct {
	ID    string `json:"id" jsonschema:"the instance's id"`
	Lines int    `json:"lines,omitempty" jsonschema:"rows of scrollback above the screen to include (default 0)"`
}

// Peeked is what peek returns.
type Peeked struct {
	ID     string `json:"id"`
	Screen string `json:"screen"`
	// Saved is true when the session is gone and Screen is what it showed
	// when git codex killed it or found it dead.
	Saved bool `json:"saved,omitempty" jsonschema:"true when the session is gone and this is its last screen, saved when git codex ended it or found it dead"`
}

// InstancePeek captures an instance's pane.
var InstancePeek = tools.Define("instance_peek", "instance.peek",
	"Show what an instance's tmux pane shows now (and some scrollback), without attaching; once its session is gone, the last screen git codex saved of it.",
	tools.CLI{Path: "peek", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in PeekIn) (*Peeked, error) {
		a, err := getInstance(c, in.ID)
		if err != nil {
			return nil, err
		}
		if err := refuseElsewhereCall(c, a, "peek"); err != nil {
			return nil, err
		}
		if in.Lines < 0 || in.Lines > 10000 {
			return nil, tools.Errorf(tools.InvalidInput, "lines must be 0-10000").With("field", "lines")
		}
		out := &Peeked{ID: a.ID}
		tm := Tmux(c.Config, c.Env)
		c.Target(a.ID)
		c.Summarize("%s peeked at %s", c.Caller.ID, a.ID)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			screen, err := tm.CaptureHistory(ctx, a.TmuxSession, in.Lines)
			if errors.Is(err, tmux.ErrNoSession) {
				// the screen git codex saved when it killed the session
				// or found it dead
				if saved, ok := savedScreen(f.Store, a.ID); ok {
					out.Screen, out.Saved = saved, true
					return nil
				}
				return tools.Errorf(tools.InstanceNotRunning, "%s has no tmux session (%s); its status is %s", a.ID, a.TmuxSession, a.Status).With("agent_id", a.ID)
			}
			out.Screen = screen
			return err
		})
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})
