package instance

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// What cleanup did, or would do, with one part of an instance.
const (
	CleanRemoved = "removed"
	CleanKept    = "kept"
	CleanGone    = "gone" // was not there
)

// CleanupItem is what cleanup did with one ended instance.
type CleanupItem struct {
	ID       string   `json:"id"`
	Status   string   `json:"status"`
	Session  string   `json:"session" jsonschema:"killed, gone, or kept"`
	Worktree string   `json:"worktree" jsonschema:"removed, kept (work could not be saved) or gone"`
	Branch   string   `json:"branch" jsonschema:"removed, kept or gone"`
	Rescued  []string `json:"rescued,omitempty" jsonschema:"refs where uncommitted changes and unmerged commits were saved before removal"`
	// Ignored are the worktree's git-ignored files (a .env, local notes,
	// build output): never committed anywhere, they are moved to
	// IgnoredSavedIn, a directory of this machine's git directory.
	Ignored        []string `json:"ignored,omitempty" jsonschema:"git-ignored files and directories of the worktree, moved to ignored_saved_in (with --force: removed)"`
	IgnoredSavedIn string   `json:"ignored_saved_in,omitempty" jsonschema:"where the ignored files were (or would be) moved: under <git dir>/codex/rescue/, never pushed"`
	// StaleLocks are git lock files a git killed with the agent left
	// (no process holds them), removed so the branch can be deleted.
	StaleLocks []string `json:"stale_locks,omitempty" jsonschema:"git lock files left by killed git processes (no process holds them), removed"`
	Lost       []string `json:"lost,omitempty" jsonschema:"with --force: the work removed without saving"`
	Error      string   `json:"error,omitempty"`
}

// CleanedUp is what cleanup and reap return.
type CleanedUp struct {
	DryRun bool `json:"dry_run"`
	// Failed are instances found dead (their spawn crashed, or their
	// session died) and marked FAILED.
	Failed []string `json:"failed"`
	// Why says, for each instance in Failed, why (reap): its agent's exit
	// status and last lines, or its session gone.
	Why map[string]string `json:"why,omitempty" jsonschema:"why each instance in failed is FAILED: its agent's exit status and last lines, its session gone, or its spawn stopped"`
	// TimedOut are reviews that ran past review.timeout_hours, TERMINATED.
	TimedOut []string      `json:"timed_out"`
	Items    []CleanupItem `json:"items"`
	// FailedSessions are delegated sessions recorded RUNNING whose runner
	// died (reap only), marked FAILED.
	FailedSessions []string `json:"failed_sessions"`
	// Elsewhere are instances another machine (or clone) spawned, not
	// cleaned up: only that machine can see their sessions, so they are
	// neither judged dead nor cleaned up here.
	Elsewhere []Elsewhere `json:"elsewhere,omitempty" jsonschema:"instances of another machine or clone (their record names another machine id), left to that machine's reap and cleanup"`
}

// CleanupIn is cleanup's input.
type CleanupIn struct {
	DryRun bool `json:"dry_run,omitempty" jsonschema:"only say what would be done"`
	Force  bool `json:"force,omitempty" jsonschema:"remove worktrees and branches without saving their work under refs/codex/rescue/"`
}

// InstanceCleanup removes what ended instances left: sessions, worktrees, branches.
var InstanceCleanup = tools.Define("instance_cleanup", "instance.cleanup",
	"Remove the tmux sessions, worktrees and branches of instances that ended (and of spawns that crashed). Work in them is never lost: "+
		"uncommitted changes and commits no other ref has are saved under refs/codex/rescue/<instance>/ first, unless --force. "+
		"Only what git codex made and recorded is touched.",
	tools.CLI{Path: "cleanup"},
	func(ctx context.Context, c *tools.Call, in CleanupIn) (*CleanedUp, error) {
		return sweep(c, in, false)
	})

// sweep is cleanup (and, with reap, the search for dead instances first).
// Inside the call's transaction it only reads and records what needs no
// look outside git (spawns that crashed); sessions are listed, and
// worktrees rescued and removed, after the commit, and their outcome is
// recorded in one more commit.
func sweep(c *tools.Call, in CleanupIn, reap bool) (*CleanedUp, error) {
	out := &CleanedUp{DryRun: in.DryRun, Failed: []string{}, TimedOut: []string{}, Items: []CleanupItem{}, FailedSessions: []string{}}
	machine, err := c.Repo.MachineID()
	if err != nil {
		return nil, err
	}
	var live, done []tools.Agent
	err = tools.WalkJSON(c.Tx, tools.DirAgents, func(a tools.Agent) {
		switch {
		case a.Status == "" || a.CleanedAt != nil:
		case RunsElsewhere(a, machine):
			out.Elsewhere = append(out.Elsewhere, Elsewhere{ID: a.ID, Status: a.Status, Host: a.Host, Machine: a.Machine})
		case Final(a.Status):
			done = append(done, a)
		case a.Status == tools.StatusStarting && !c.Repo.WorkHeld(a.ID):
			// its spawn died between recording it and starting it
			if !in.DryRun {
				SetStatus(c, &a, tools.StatusFailed, "its spawn stopped before the instance started")
			}
			out.Failed = append(out.Failed, a.ID)
			if out.Why == nil {
				out.Why = map[string]string{}
			}
			out.Why[a.ID] = "its spawn stopped before the instance started"
			done = append(done, a)
		case a.Status != tools.StatusStarting:
			live = append(live, a)
		}
	})
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(c.Config.IntValue("review.timeout_hours")) * time.Hour
	now := c.Tx.Now()
	tm := Tmux(c.Config, c.Env)
	c.Summarize("%s cleaned up", c.Caller.ID)
	if reap {
		c.Summarize("%s reaped", c.Caller.ID)
		dead, err := c.Reap(in.DryRun) // delegated sessions whose runner died (reapDelegations)
		if err != nil {
			return nil, err
		}
		out.FailedSessions = dead
	}
	c.After(func(ctx context.Context, f *tools.Followup) error {
		if reap {
			dead, why, timedOut, err := findDead(ctx, f.Store, tm, live, now, timeout)
			if err != nil {
				return err
			}
			out.Failed = append(out.Failed, IDs(dead)...)
			if len(why) > 0 {
				if out.Why == nil {
					out.Why = map[string]string{}
				}
				for id, w := range why {
					out.Why[id] = w
				}
			}
			out.TimedOut = IDs(timedOut)
			if !in.DryRun && len(dead)+len(timedOut) > 0 {
				err := f.Record(ctx, func(c *tools.Call) error {
					c.Summarize("%s: %d instance(s) died, %d review(s) timed out", f.Caller.ID, len(dead), len(timedOut))
					for _, a := range dead {
						if err := markEnded(c, []tools.Agent{a}, tools.StatusFailed, why[a.ID]); err != nil {
							return err
						}
					}
					return markEnded(c, timedOut, tools.StatusTerminated, "review timed out (review.timeout_hours)")
				})
				if err != nil {
					return err
				}
			}
			done = append(done, dead...)
			done = append(done, timedOut...)
		}
		sort.Slice(done, func(i, j int) bool { return done[i].ID < done[j].ID })
		for _, a := range done {
			out.Items = append(out.Items, Clean(ctx, f, tm, a, in, true))
		}
		if in.DryRun || len(out.Items) == 0 {
			return nil
		}
		return f.Record(ctx, func(c *tools.Call) error {
			c.Summarize("%s cleaned up %d instance(s)", f.Caller.ID, len(out.Items))
			now := c.Tx.Now()
			for _, it := range out.Items {
				a, err := tools.GetAgent(c.Tx, it.ID)
				if err != nil || it.Error != "" {
					continue
				}
				a.CleanedAt, a.Rescued, a.UpdatedAt, a.UpdatedBy, a.Clock = &now, append(a.Rescued, it.Rescued...), now, c.Caller.ID, c.Tx.Clock()
				if err := c.Tx.Put(tools.AgentPath(a.ID), a); err != nil {
					return err
				}
			}
			return nil
		})
	})
	return out, nil
}

// findDead sorts the running instances into those whose session died
// (with why: the agent's exit status and last words, which are saved for
// peek before cleanup kills the pane) and reviews that ran too long.
func findDead(ctx context.Context, st tools.Dirs, tm tmux.Runner, live []tools.Agent, now time.Time, timeout time.Duration) (dead []tools.Agent, why map[string]string, timedOut []tools.Agent, err error) {
	sessions, err := tm.List(ctx)
	if err != nil {
		return nil, nil, nil, tools.Errorf(tools.InternalError, "list tmux sessions: %v", err)
	}
	byName := map[string]tmux.Session{}
	for _, s := range sessions {
		byName[s.Name] = s
	}
	why = map[string]string{}
	for _, a := range live {
		s, found := byName[a.TmuxSession]
		switch {
		case !found && a.Machine == "" && !WorktreeHere(a.Worktree, st.GitDir()):
			// a record from before instances kept their machine, of
			// another clone (two clones on one machine, after a sync):
			// its session is not this repository's to judge
		case !found || s.PaneDead:
			dead = append(dead, a)
			why[a.ID] = deathOf(ctx, st, tm, a, s, found)
		case a.Status == tools.StatusReviewing && timeout > 0 && now.Sub(a.CreatedAt) > timeout:
			timedOut = append(timedOut, a)
		}
	}
	return dead, why, timedOut, nil
}

// markEnded ends instances still in the status they were found in.
func markEnded(c *tools.Call, list []tools.Agent, status, reason string) error {
	for _, found := range list {
		a, err := tools.GetAgent(c.Tx, found.ID)
		if err != nil || a.Status != found.Status {
			continue // changed meanwhile: that change stands
		}
		if err := SetStatus(c, &a, status, reason); err != nil {
			return err
		}
	}
	return nil
}

func IDs(list []tools.Agent) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, a.ID)
	}
	return out
}

// Clean removes one ended instance's session (unless kill is
// false: the caller kills it), worktree and branch, saving their work
// first (unless forced). A worktree whose work could not be saved is kept.
func Clean(ctx context.Context, f *tools.Followup, tm tmux.Runner, a tools.Agent, in CleanupIn, kill bool) CleanupItem {
	it := CleanupItem{ID: a.ID, Status: a.Status, Session: CleanGone, Worktree: CleanGone, Branch: CleanGone}
	if has, err := tm.HasSession(ctx, a.TmuxSession); err == nil && has && kill {
		it.Session = "killed"
		if !in.DryRun {
			saveScreen(ctx, f.Store, tm, a)
			if err := tm.Kill(ctx, a.TmuxSession); err != nil {
				it.Session, it.Error = CleanKept, fmt.Sprintf("kill session: %v", err)
			}
		}
	}
	release, err := f.Store.HoldWork("cleanup-" + a.ID)
	if err != nil {
		it.Error = "another cleanup is removing it"
		return it
	}
	defer release()
	work, err := f.Repo.WorkIn(ctx, a.Worktree, a.Branch)
	if err != nil {
		it.Worktree, it.Branch, it.Error = CleanKept, CleanKept, err.Error()
		return it
	}
	work.Ignored = notOurs(work.Ignored)
	// locks a git killed with the agent left: its session is gone (killed
	// above, or dead), and no process holds them
	if it.Session != CleanKept {
		it.StaleLocks = f.Repo.StaleGitLocks(ctx, a.Worktree, a.Branch)
	}
	if work.Exists {
		it.Worktree = CleanRemoved
	}
	if f.Repo.BranchExists(ctx, a.Branch) {
		it.Branch = CleanRemoved
	}
	if len(work.Ignored) > 0 {
		if in.Force {
			it.Lost = append(it.Lost, work.Ignored...)
		} else {
			it.Ignored = work.Ignored
			it.IgnoredSavedIn = f.Repo.IgnoredDir(a.ID)
			if !in.DryRun {
				if _, err := f.Repo.SaveIgnored(ctx, a.ID, a.Worktree, work.Ignored); err != nil {
					it.Worktree, it.Branch, it.Error = CleanKept, CleanKept, "saving its ignored files failed, so it is kept: "+err.Error()
					return it
				}
			}
		}
	}
	if len(it.StaleLocks) > 0 && !in.DryRun {
		if err := f.Repo.RemoveGitLocks(it.StaleLocks); err != nil {
			it.Error = "removing stale git locks: " + err.Error()
		}
	}
	if work.Lost() {
		if in.Force {
			it.Lost = append(it.Lost, append(work.Dirty, work.Unmerged...)...)
		} else if in.DryRun {
			it.Rescued = rescueRefs(a.ID, work)
		} else {
			refs, err := f.Repo.Rescue(ctx, a.ID, a.Worktree, a.Branch)
			if err != nil {
				it.Worktree, it.Branch, it.Error = CleanKept, CleanKept, "saving its work failed, so it is kept: "+err.Error()
				return it
			}
			it.Rescued = refs
		}
	}
	if in.DryRun {
		return it
	}
	if err := f.Repo.RemoveWorktree(ctx, a.Worktree); err != nil {
		it.Worktree, it.Error = CleanKept, err.Error()
		return it
	}
	if err := f.Repo.DeleteBranch(ctx, a.Branch); err != nil {
		it.Branch, it.Error = CleanKept, err.Error()
	}
	return it
}

// ownWorktreeDirs are the directories git codex writes into an agent's
// worktree (its MCP config and prompt, an agent CLI's settings it made):
// git-ignored, and nobody's work.
var ownWorktreeDirs = []string{instanceDir + "/", ".gemini/"}

// legacyOwnFiles are the files git codex wrote into a worktree's .codex/
// before the folder became .git-codex/ (Codex CLI reads a project's
// .codex/ as its own, so only these files of it are git codex's):
// worktrees made then keep them until cleanup removes the worktree.
var legacyOwnFiles = []string{".codex/mcp.json", ".codex/prompt.md", ".codex/.gitignore"}

// OwnsWorktreeFile reports whether rel (slash-separated, relative to a
// worktree's top) is in the folder git codex keeps its files in there.
func OwnsWorktreeFile(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	if strings.EqualFold(first+"/", ownWorktreeDirs[0]) {
		return true
	}
	for _, f := range legacyOwnFiles {
		if strings.EqualFold(rel, f) {
			return true
		}
	}
	return false
}

// notOurs drops git codex's own files from a worktree's ignored files.
func notOurs(ignored []string) []string {
	var out []string
	for _, p := range ignored {
		own := false
		for _, d := range ownWorktreeDirs {
			if p == d || strings.HasPrefix(p, d) {
				own = true
			}
		}
		own = own || slices.Contains(legacyOwnFiles, p)
		if !own {
			out = append(out, p)
		}
	}
	return out
}

// rescueRefs are the refs Rescue would write for the work found.
func rescueRefs(id string, w repo.WorktreeWork) []string {
	var refs []string
	if len(w.Unmerged) > 0 {
		refs = append(refs, repo.RefRescue+"/"+id+"/branch")
	}
	if len(w.Dirty) > 0 {
		refs = append(refs, repo.RefRescue+"/"+id+"/worktree")
	}
	return refs
}
