package instance

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/prompts"
)

// An instance is an agent git codex runs: an agent record with a status,
// its own branch and worktree, and a tmux session running an agent CLI.

// Final reports whether an instance status is final: nothing of the
// instance should be running, and cleanup may remove what it left.
func Final(status string) bool {
	return slices.Contains([]string{tools.StatusTerminated, tools.StatusAbandoned, tools.StatusFailed, tools.StatusCompleted}, status)
}

// instancePrefix is the first word of an instance's id, by type, in the
// seeds' style (work-123-a1).
func instancePrefix(t tools.AgentType) string {
	switch t {
	case tools.TypeCoding:
		return "work"
	case tools.TypeReview:
		return "review"
	case tools.TypePlanning:
		return "plan"
	case tools.TypeSupervisor:
		return "super"
	case tools.TypeOrchestrator:
		return "orch"
	}
	return string(t)
}

// NewID makes a short id: the type's prefix, five characters of
// the time and two random ones (work-0k3fq-x7). An id that is taken is
// refused by the caller and the next call makes another.
func NewID(t tools.AgentType, now time.Time) string {
	id := gitstate.NewID("x", now) // x-<10 time><6 random>
	return instancePrefix(t) + "-" + id[7:12] + "-" + id[12:14]
}

// SessionName is the tmux session of an instance: prefixed, so that a
// person's own sessions are never mistaken for ours.
func SessionName(instance string) string { return "codex-" + instance }

// BranchName is the branch an instance works on.
func BranchName(instance string) string { return "codex/" + instance }

// WorktreeDir is where instances' worktrees go: worktree.dir, else
// <repository>.codex-worktrees beside the repository.
func WorktreeDir(c *tools.Call) string {
	top := mainWorkTree(c.Repo)
	if d := c.Config.StringValue("worktree.dir"); d != "" {
		if !filepath.IsAbs(d) && top != "" {
			d = filepath.Join(top, d)
		}
		return filepath.Clean(d)
	}
	if top == "" {
		top = strings.TrimSuffix(c.Repo.GitDir(), string(filepath.Separator)+".git")
	}
	return top + ".codex-worktrees"
}

// mainWorkTree is the repository's main work tree, wherever the caller
// runs: a coder asking for its review from its own worktree gets its
// reviewer beside itself, not in a directory beside its worktree. It is
// the caller's work tree when the git directory is not <top>/.git.
func mainWorkTree(r tools.Dirs) string {
	if gd := r.GitDir(); filepath.Base(gd) == ".git" {
		return filepath.Dir(gd)
	}
	return r.WorkDir()
}

// Tmux is the tmux server of agents' sessions: tmux.socket if set, else
// the environment's.
func Tmux(c *tools.Config, env tools.Env) tmux.Runner {
	r := env.Tmux
	if s := c.StringValue("tmux.socket"); s != "" {
		r.Socket = s
	}
	return r
}

// Start makes what the instance's intent names (worktree, the
// files git codex puts in it, the tmux session) and records the outcome:
// live (ACTIVE, or REVIEWING for a reviewer), or FAILED with why, after
// removing what it made; onFail (if set) records what else a failure
// undoes in the same commit.
func Start(ctx context.Context, f *tools.Followup, a tools.Agent, token string, l Launcher, prompt, live string, timeout time.Duration, out *Spawned, onFail func(*tools.Call) error) error {
	err := makeInstance(ctx, f, a, token, l, prompt, timeout)
	failed := false
	rerr := f.Record(ctx, func(c *tools.Call) error {
		cur, gerr := tools.GetAgent(c.Tx, a.ID)
		if gerr != nil {
			return gerr
		}
		up := cur.Status == tools.StatusActive || cur.Status == tools.StatusReviewing
		if up && !atScreen(err) {
			err = nil // up, whatever the wait saw after
		}
		// connected, but stopped at a screen of its CLI (Gemini CLI
		// started its servers behind its sign-in choice under load): it
		// has done nothing, and is recorded FAILED as if it never
		// connected
		if cur.Status != tools.StatusStarting && !(up && err != nil) {
			// the agent's server said it is up (MarkUp) or the agent
			// called in (markRunning), or someone ended it meanwhile:
			// that status stands, and what was made is left for
			// cleanup, which rescues work before it removes anything.
			out.Status = cur.Status
			c.Target(a.ID)
			c.Summarize("%s's session started; it was %s already", a.ID, cur.Status)
			return nil
		}
		cur.Status, cur.UpdatedAt, cur.UpdatedBy, cur.Clock = live, c.Tx.Now(), f.Caller.ID, c.Tx.Clock()
		c.Summarize("%s is %s", a.ID, live)
		if err != nil {
			failed = true
			cur.Status, cur.StatusReason = tools.StatusFailed, err.Error()
			end := c.Tx.Now()
			cur.EndedAt = &end
			out.Error = err.Error()
			c.Summarize("%s FAILED to start: %s", a.ID, mail.OneLineCut(err.Error()))
			if onFail != nil {
				if err := onFail(c); err != nil {
					return err
				}
			}
		}
		out.Status = cur.Status
		c.Target(a.ID)
		return c.Tx.Put(tools.AgentPath(a.ID), cur)
	})
	if err != nil && (failed || rerr != nil) {
		// what was made is fresh: nothing of anybody's work is in it
		tearDown(ctx, f, a)
	}
	if rerr == nil && err != nil {
		return tools.Errorf(tools.AgentStartFailed, "%s did not start: %v. It is recorded FAILED and what was made for it is removed; `git codex peek %s` shows its last screen", a.ID, err, a.ID).
			With("instance_id", a.ID).With("agent", l.Name)
	}
	return rerr
}

// markRunning records that an instance calling a tool while STARTING runs:
// its own call proves it is up, as its MCP server's initialize does
// (MarkUp), and an agent whose first call comes before that commit must
// not be refused for a state it has already left. The call's own commit
// carries the change; a refused call discards it.
func markRunning(c *tools.Call) error {
	a := c.Agent
	if a == nil || a.Status != tools.StatusStarting || c.Caller.ID != a.ID {
		return nil
	}
	a.Status = tools.StatusActive
	if a.ReviewOf != "" {
		a.Status = tools.StatusReviewing
	}
	a.UpdatedAt, a.UpdatedBy, a.Clock = c.Tx.Now(), a.ID, c.Tx.Clock()
	return c.Tx.Put(tools.AgentPath(a.ID), *a)
}

// StartTimeout is the wait for an agent to connect: the spawn's own, else
// instance.start_timeout.
func StartTimeout(cfg *tools.Config, seconds int) (time.Duration, error) {
	if seconds == 0 {
		seconds = cfg.IntValue("instance.start_timeout")
	}
	if seconds < 1 || seconds > 3600 {
		return 0, tools.Errorf(tools.InvalidInput, "start_timeout must be 1-3600 seconds").With("field", "start_timeout")
	}
	return time.Duration(seconds) * time.Second, nil
}

func makeInstance(ctx context.Context, f *tools.Followup, a tools.Agent, token string, l Launcher, prompt string, timeout time.Duration) error {
	if err := f.Repo.AddWorktree(ctx, a.Worktree, a.Branch, a.BaseCommit); err != nil {
		return fmt.Errorf("make the worktree: %w", err)
	}
	mcpConfig, promptFile, err := writeInstanceFiles(a.Worktree, prompt)
	if err != nil {
		return fmt.Errorf("write the instance's files: %w", err)
	}
	if l.Name == "gemini" {
		if err := writeGeminiSettings(a.Worktree); err != nil {
			return fmt.Errorf("write the instance's Gemini CLI settings: %w", err)
		}
	}
	cfg, err := f.Config(ctx)
	if err != nil {
		return err
	}
	r := Tmux(cfg, f.Env)
	env := map[string]string{
		"CODEX_INSTANCE":   a.ID,
		"CODEX_TOKEN":      token,
		"CODEX_MCP_CONFIG": mcpConfig,
	}
	for k, v := range l.env {
		env[k] = v
	}
	err = startSession(ctx, f, cfg, r, a, tmux.SessionSpec{
		Name: a.TmuxSession, Dir: a.Worktree, Env: env, KeepDeadPane: true, Width: 200, Height: 50,
		Command: []string{l.commandLine(mcpConfig, a.ID, promptFile)},
	})
	if err != nil {
		return fmt.Errorf("start the tmux session: %w", err)
	}
	if l.Ready == ReadyMCP {
		return waitUp(ctx, f, r, a, l, timeout)
	}
	s, err := watchStart(ctx, r, a.TmuxSession)
	if err != nil {
		return err
	}
	if s.PaneDead {
		status, out := deadPaneOutput(ctx, r, a.TmuxSession, s)
		saveScreen(ctx, f.Store, r, a)
		if status < 0 {
			return fmt.Errorf("the agent (%s) exited at once: %s", l.Command, out)
		}
		return fmt.Errorf("the agent (%s) exited at once with status %d: %s", l.Command, status, out)
	}
	return nil
}

// deadPaneOutput returns the exit status of dead pane s (-1 if tmux does
// not know it) and the last lines it showed, without the notice tmux adds.
// tmux sees the terminal close and collects the process's status as
// separate events, so under load a pane can be dead before its status is
// known; it is looked at again, for up to a second (under heavy load tmux
// took longer than that to reap the process: the error then says no
// status). Output tmux had not read when the process exited used to be
// discarded, not shown late (tmux/tmux#506): looking again cannot bring
// it back. The pane's pipe (tmux.NewSession's KeepDeadPane) makes tmux
// read it first; about 1 dead pane in 100 at load still shows nothing.
func deadPaneOutput(ctx context.Context, r tmux.Runner, session string, s tmux.Session) (int, string) {
	deadline := time.Now().Add(time.Second)
	for {
		if s.PaneExitStatus < 0 {
			if again, err := Pane(ctx, r, session); err == nil {
				s = again
			}
		}
		screen, _ := r.CaptureHistory(ctx, session, 20)
		var kept []string
		for _, line := range strings.Split(screen, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "Pane is dead") {
				kept = append(kept, line)
			}
		}
		out := lastLines(strings.Join(kept, "\n"), 3)
		if (out != "" && s.PaneExitStatus >= 0) || time.Now().After(deadline) || ctx.Err() != nil {
			return s.PaneExitStatus, out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pane finds a session on the server.
func Pane(ctx context.Context, r tmux.Runner, name string) (tmux.Session, error) {
	sessions, err := r.List(ctx)
	if err != nil {
		return tmux.Session{}, err
	}
	for _, s := range sessions {
		if s.Name == name {
			return s, nil
		}
	}
	return tmux.Session{}, fmt.Errorf("tmux session %s: %w", name, tmux.ErrNoSession)
}

// tearDown removes an instance's session, worktree and branch, without
// looking at what they hold: only for what was just made.
func tearDown(ctx context.Context, f *tools.Followup, a tools.Agent) {
	ctx = context.WithoutCancel(ctx)
	if cfg, err := f.Config(ctx); err == nil {
		Tmux(cfg, f.Env).Kill(ctx, a.TmuxSession)
	}
	f.Repo.RemoveWorktree(ctx, a.Worktree)
	f.Repo.DeleteBranch(ctx, a.Branch)
}

// lastLines is the last n non-blank lines of a screen, joined by " | ".
func lastLines(screen string, n int) string {
	var lines []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// RegistryPrompt renders a prompt command of the repository's registry
// (the team's own template of that C3L name, else git codex's built-in),
// for an instance's first prompt; ok is false if it cannot be rendered,
// and the caller falls back to the prompt built in Go.
func RegistryPrompt(root string, c1, c2, c3 string, a tools.Agent, vars map[string]string) (string, bool) {
	if root == "" {
		return "", false
	}
	cat := prompts.Load(root, "climpt")
	cmd, ok := cat.Lookup(c1, c2, c3)
	if !ok {
		return "", false
	}
	all := map[string]string{"codex_caller": a.ID, "codex_caller_type": string(a.Type), "codex_worktree": a.Worktree, "codex_branch": a.Branch}
	for k, v := range vars {
		all[k] = v
	}
	r, err := cat.Execute(cmd, nil, all)
	if err != nil {
		return "", false
	}
	return r.Prompt, true
}

// firstPrompt is a spawned instance's first prompt: the registry's
// `codex work task` (a team can override it in .agent/climpt/prompts/),
// else workPrompt.
func firstPrompt(root string, a tools.Agent) string {
	title, rest, _ := strings.Cut(strings.TrimSpace(a.Prompt), "\n")
	vars := map[string]string{"codex_task_id": a.ID, "codex_task_title": title, "codex_task_description": strings.TrimSpace(rest),
		"input_text": handover(a.Type)}
	if p, ok := RegistryPrompt(root, "codex", "work", "task", a, vars); ok {
		return p
	}
	return workPrompt(a)
}

// workPrompt is the first prompt of a spawned instance: its task and how
// it works with git codex.
func workPrompt(a tools.Agent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, a %s agent run by git codex in your own git worktree (%s) on branch %s.\n\n", a.ID, a.Type, a.Worktree, a.Branch)
	fmt.Fprintf(&b, "Your task:\n\n%s\n\n", a.Prompt)
	b.WriteString(handover(a.Type) + "\n")
	return b.String()
}

// MayRegister keeps agent.register from granting more than the caller has:
// only people and supervisors create the types that may manage agents
// (supervisor, orchestrator, planning); anyone else allowed agent.register
// creates workers, coders and reviewers.
func MayRegister(caller, t tools.AgentType) bool {
	switch caller {
	case tools.TypeHuman, tools.TypeSupervisor:
		return true
	}
	return t == tools.TypeWorker || t == tools.TypeCoding || t == tools.TypeReview
}

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
