package instance

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
)

// SendIn is send's input.
type SendIn struct {
	ID   string `json:"id" jsonschema:"the instance's id"`
	Text string `json:"text" jsonschema:"what to type into its pane; Enter is pressed after it"`
}

// Sent is what send returns.
type Sent struct {
	ID        string `json:"id"`
	Submitted bool   `json:"submitted" jsonschema:"true once the agent was seen to take the line"`
	// ConfirmedBy says what showed it: turn_started (the CLI's busy
	// mark), echoed (the line in its transcript), read (the program read
	// it from its terminal), left_input (it left the cursor's line: all
	// that is known of a program other than the built-in CLIs that reads
	// keys as they come).
	ConfirmedBy string `json:"confirmed_by" jsonschema:"what showed the line was taken: turn_started, echoed, read, or left_input"`
}

// InstanceSend types a nudge into an instance's pane and confirms it was taken.
var InstanceSend = tools.Define("instance_send", "instance.send",
	"Type a message into an instance's tmux pane and press Enter; submitted only once the agent is seen to take the line (claude, codex, gemini: it shows in their transcript or a turn starts; another program: it read the line from its terminal). Fails with NUDGE_NOT_DELIVERED, typing nothing, when the pane is not at the agent's input (a dialog, a menu, a panel; for claude, codex and gemini their input line as they draw it); after a bounded retry of the Enter (and of the line, if it left the input unanswered), with details.seen saying what the pane showed.",
	tools.CLI{Path: "send", Args: []string{"id", "text"}},
	func(ctx context.Context, c *tools.Call, in SendIn) (*Sent, error) {
		a, err := getInstance(c, in.ID)
		if err != nil {
			return nil, err
		}
		if err := refuseElsewhereCall(c, a, "send"); err != nil {
			return nil, err
		}
		if strings.TrimSpace(in.Text) == "" || strings.ContainsAny(in.Text, "\r\n") {
			return nil, tools.Errorf(tools.InvalidInput, "text must be one non-empty line").With("field", "text")
		}
		if Final(a.Status) {
			return nil, tools.Errorf(tools.InstanceNotRunning, "%s is %s; nothing reads its pane", a.ID, a.Status).With("agent_id", a.ID).With("status", a.Status)
		}
		if a.Status == tools.StatusStarting {
			// whatever its pane shows is not the agent's input yet: a
			// trust dialog, a sign-in menu, where keys pick options
			return nil, tools.Errorf(tools.InstanceNotRunning, "%s is STARTING: its agent has not connected to git codex yet, so its pane is not at the agent's input; nothing was typed (see `git codex peek %s`)", a.ID, a.ID).
				With("agent_id", a.ID).With("status", a.Status)
		}
		out := &Sent{ID: a.ID}
		tm := Tmux(c.Config, c.Env)
		c.Target(a.ID)
		c.Summarize("%s nudged %s", c.Caller.ID, a.ID)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			how, err := Nudge(ctx, tm, a, in.Text)
			if rerr := RecordNudge(ctx, f, a, "the line", how, err); err == nil && rerr != nil {
				return rerr
			}
			if err != nil {
				return err
			}
			out.Submitted, out.ConfirmedBy = true, how
			return nil
		})
		return out, nil
	})
