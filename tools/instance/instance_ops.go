package instance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// Live states of an instance's tmux session, as ps shows them.
const (
	LiveRunning = "running" // the session's pane runs the agent
	LiveDead    = "dead"    // the pane's process exited; the session stays for a look
	LiveMissing = "missing" // no such session (killed, or its tmux server is gone)
	LiveNone    = "-"       // ended and cleaned up: nothing should run
	// LiveElsewhere: another machine runs it (its host is the record's);
	// no session here says anything of it.
	LiveElsewhere = "elsewhere"
)

// getInstance reads an instance (an agent git codex runs), or fails with
// AGENT_NOT_FOUND, or INVALID_INPUT for an agent that is only registered.
func getInstance(c *tools.Call, id string) (tools.Agent, error) {
	a, err := tools.GetAgent(c.Tx, id)
	if err != nil {
		return tools.Agent{}, err
	}
	if a.Status == "" {
		return tools.Agent{}, tools.Errorf(tools.InvalidInput, "%s is a registered agent, not an instance git codex runs; list instances with `git codex ps`", id).With("agent_id", id)
	}
	return a, nil
}

// View is one instance as ps shows it: its record and the live
// state of its session.
type View struct {
	tools.Agent
	Live           string `json:"live" jsonschema:"running, dead, missing, elsewhere (another machine runs it: see host), or - for an instance that ended and was cleaned up"`
	PaneExitStatus *int   `json:"pane_exit_status,omitempty"`
}

// InstanceList is what ps returns, sorted by id.
type InstanceList struct {
	Count     int    `json:"count"`
	Instances []View `json:"instances"`
}

// InstanceListIn is ps's input.
type InstanceListIn struct {
	All bool `json:"all,omitempty" jsonschema:"also instances that ended and were cleaned up"`
}

// InstanceListTool lists instances with the live state of their sessions.
var InstanceListTool = tools.Define("instance_list", "instance.list",
	"List the agent instances git codex runs, with their status, branch, worktree and whether their tmux session is running, dead or missing (elsewhere: another machine runs it).",
	tools.CLI{Path: "ps"},
	func(ctx context.Context, c *tools.Call, in InstanceListIn) (*InstanceList, error) {
		out := &InstanceList{Instances: []View{}}
		err := tools.WalkJSON(c.Tx, tools.DirAgents, func(a tools.Agent) {
			if a.Status != "" && (in.All || a.CleanedAt == nil) {
				out.Instances = append(out.Instances, View{Agent: a, Live: LiveNone})
			}
		})
		if err != nil {
			return nil, err
		}
		out.Count = len(out.Instances)
		machine, err := c.Repo.MachineID()
		if err != nil {
			return nil, err
		}
		c.Summarize("%s listed %d instance(s)", c.Caller.ID, out.Count)
		tm := Tmux(c.Config, c.Env)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			return fillLive(ctx, tm, machine, out.Instances)
		})
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// fillLive sets the live state of each instance from one listing of the
// tmux server (outside the writer lock). An instance of another machine
// than this repository's (machine) is elsewhere, whatever this machine's
// tmux server holds: a session of the same name here is not its.
func fillLive(ctx context.Context, tm tmux.Runner, machine string, views []View) error {
	sessions, err := tm.List(ctx)
	if err != nil {
		return tools.Errorf(tools.InternalError, "list tmux sessions: %v", err)
	}
	byName := map[string]tmux.Session{}
	for _, s := range sessions {
		byName[s.Name] = s
	}
	for i := range views {
		v := &views[i]
		s, ok := byName[v.TmuxSession]
		switch {
		case v.CleanedAt == nil && RunsElsewhere(v.Agent, machine):
			v.Live = LiveElsewhere
		case ok && s.PaneDead:
			v.Live = LiveDead
			if s.PaneExitStatus >= 0 {
				v.PaneExitStatus = &s.PaneExitStatus
			}
		case ok:
			v.Live = LiveRunning
		case v.CleanedAt == nil:
			v.Live = LiveMissing
		}
	}
	return nil
}

// InstanceIDIn names one instance.
type InstanceIDIn struct {
	ID string `json:"id" jsonschema:"the instance's id"`
}

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

// Ended is what kill and abandon return.
type Ended struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Session says what became of the tmux session: killed, or gone.
	Session string `json:"session"`
}

// InstanceKill stops an instance: TERMINATED, its session killed.
var InstanceKill = tools.Define("instance_kill", "instance.kill",
	"Stop an instance: it becomes TERMINATED and its tmux session is killed. Its worktree and branch stay until `git codex cleanup`, which saves any work in them first.",
	tools.CLI{Path: "kill", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in InstanceIDIn) (*Ended, error) {
		return endInstance(c, in.ID, tools.StatusTerminated, "killed by "+c.Caller.ID)
	})

// InstanceAbandon gives up on an instance's work: ABANDONED, its session killed.
var InstanceAbandon = tools.Define("instance_abandon", "instance.abandon",
	"Give up on an instance's approach: it becomes ABANDONED and its tmux session is killed; `git codex cleanup` then removes its worktree and branch, saving any work in them first.",
	tools.CLI{Path: "abandon", Args: []string{"id"}},
	func(ctx context.Context, c *tools.Call, in InstanceIDIn) (*Ended, error) {
		return endInstance(c, in.ID, tools.StatusAbandoned, "abandoned by "+c.Caller.ID)
	})

// endInstance records an instance's end, then (after the commit: a kill
// cannot be undone) kills its session.
func endInstance(c *tools.Call, id, status, reason string) (*Ended, error) {
	a, err := getInstance(c, id)
	if err != nil {
		return nil, err
	}
	verb := "kill"
	if status == tools.StatusAbandoned {
		verb = "abandon"
	}
	if err := refuseElsewhereCall(c, a, verb); err != nil {
		return nil, err
	}
	if Final(a.Status) {
		return nil, tools.Errorf(tools.InvalidAgentState, "%s has already ended (%s)", a.ID, a.Status).With("agent_id", a.ID).With("status", a.Status)
	}
	if err := SetStatus(c, &a, status, reason); err != nil {
		return nil, err
	}
	c.Target(a.ID)
	c.Summarize("%s ended %s: %s", c.Caller.ID, a.ID, status)
	out := &Ended{ID: a.ID, Status: status}
	tm := Tmux(c.Config, c.Env)
	c.After(func(ctx context.Context, f *tools.Followup) error {
		out.Session = killInstanceSession(ctx, f.Store, tm, a)
		return nil
	})
	return out, nil
}

// SetStatus writes an instance's new status (and its end, if final), and
// for a final one runs the AgentEnded hooks: a reviewer that ends while
// it holds its coder's active review (killed, dead, or never started)
// frees it (endActiveReview), and the coder waits no more.
func SetStatus(c *tools.Call, a *tools.Agent, status, reason string) error {
	now := c.Tx.Now()
	a.Status, a.StatusReason, a.UpdatedAt, a.UpdatedBy, a.Clock = status, reason, now, c.Caller.ID, c.Tx.Clock()
	if Final(status) && a.EndedAt == nil {
		a.EndedAt = &now
	}
	if err := c.Tx.Put(tools.AgentPath(a.ID), *a); err != nil {
		return err
	}
	if !Final(status) {
		return nil
	}
	return c.AgentEnded(a)
}

// KillSession kills a session and says what became of it.
func KillSession(ctx context.Context, tm tmux.Runner, name string) string {
	has, err := tm.HasSession(ctx, name)
	if err != nil || !has {
		return "gone"
	}
	if err := tm.Kill(ctx, name); err != nil {
		return fmt.Sprintf("kill failed: %v", err)
	}
	return "killed"
}

// AttachTarget is the tmux server and session of an instance, read from a
// snapshot, for `git codex attach` (which hands the terminal to tmux and
// so is no tool call). machine is this repository's machine id: another
// machine's instance is refused (INSTANCE_ELSEWHERE).
func AttachTarget(sn *gitstate.Snapshot, keys *tools.ConfigKeys, id, machine string) (tmux.Runner, string, error) {
	var a tools.Agent
	if err := sn.Get(tools.AgentPath(id), &a); err != nil || a.Status == "" {
		return tmux.Runner{}, "", tools.Errorf(tools.AgentNotFound, "no instance %q; list them with `git codex ps`", id).With("agent_id", id)
	}
	if err := refuseElsewhere(a, machine, "attach"); err != nil {
		return tmux.Runner{}, "", err
	}
	if Final(a.Status) {
		return tmux.Runner{}, "", tools.Errorf(tools.InstanceNotRunning, "%s is %s; see its last screen with `git codex peek %s` while its session lasts", id, a.Status, id).With("agent_id", id)
	}
	cfg, err := tools.LoadConfig(sn, keys)
	if err != nil {
		return tmux.Runner{}, "", err
	}
	return Tmux(cfg, tools.Env{}), a.TmuxSession, nil
}

// SetStatusIn is agent_set_status's input.
type SetStatusIn struct {
	Status string `json:"status" jsonschema:"COMPLETED when your work is done, or ACTIVE"`
	Reason string `json:"reason,omitempty" jsonschema:"why, in a line"`
}

// AgentSetStatus lets an instance change its own status, and only its own:
// COMPLETED when its work is done, ACTIVE to take it up again. The review
// loop's statuses are set by the review loop.
var AgentSetStatus = tools.Define("agent_set_status", "agent.set_status",
	"Set your own status (instances git codex runs): COMPLETED when your work is done, ACTIVE to go on. Only your own; WAITING_REVIEW and REVIEWING are the review loop's.",
	tools.CLI{Path: "agent set-status", Args: []string{"status"}},
	func(ctx context.Context, c *tools.Call, in SetStatusIn) (*tools.Agent, error) {
		a := c.Agent
		if a == nil || a.Status == "" {
			return nil, tools.Errorf(tools.PermissionDenied, "only instances git codex runs have a status to set; see `git codex ps`").With("agent_type", string(c.Caller.Type))
		}
		if in.Status != tools.StatusCompleted && in.Status != tools.StatusActive {
			return nil, tools.Errorf(tools.InvalidInput, "status %q: set COMPLETED or ACTIVE (the review loop sets the others)", in.Status).With("field", "status")
		}
		if Final(a.Status) || a.Status == tools.StatusWaitingReview || a.Status == tools.StatusReviewing || a.Status == tools.StatusStarting {
			return nil, tools.Errorf(tools.InvalidAgentState, "%s is %s; it cannot become %s now", a.ID, a.Status, in.Status).With("agent_id", a.ID).With("status", a.Status)
		}
		if err := SetStatus(c, a, in.Status, in.Reason); err != nil {
			return nil, err
		}
		c.Target(a.ID)
		c.Summarize("%s is %s", a.ID, in.Status)
		return a, nil
	})
