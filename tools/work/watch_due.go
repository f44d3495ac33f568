package work

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// What `git codex watch` looks at before it calls reap or github_retry:
// both are tool calls that commit, so the watcher first asks, without a
// commit, whether there is anything for them to do.

// ReapDue lists the instances reap would act on now: a live instance of
// this machine whose session died or is gone, and a review running past
// review.timeout_hours. An instance another machine (or clone) spawned
// is not this machine's to reap (runsHere).
func ReapDue(ctx context.Context, sn *gitstate.Snapshot, keys *tools.ConfigKeys, env tools.Env, repo tools.Repo, now time.Time) ([]string, error) {
	if sn.Commit() == "" {
		return nil, nil
	}
	machine, err := repo.MachineID()
	if err != nil {
		return nil, err
	}
	views, err := LiveInstances(ctx, sn, keys, env, machine)
	if err != nil {
		return nil, err
	}
	cfg, err := tools.LoadConfig(sn, keys)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(cfg.IntValue("review.timeout_hours")) * time.Hour
	var due []string
	for _, v := range views {
		if v.Status == "" || ended(v.Status) || v.Status == tools.StatusStarting || v.CleanedAt != nil || !runsHere(v.Agent, machine, repo.GitDir()) {
			continue
		}
		switch {
		case v.Live == LiveDead || v.Live == LiveMissing:
			due = append(due, v.ID)
		case v.Status == tools.StatusReviewing && timeout > 0 && now.Sub(v.CreatedAt) > timeout:
			due = append(due, v.ID)
		}
	}
	return due, nil
}

// WorktreeHere reports whether an instance's worktree is this
// repository's (gitDir is its common git directory), or gone: a worktree
// that exists and whose .git names another repository is another
// clone's, and so is its instance.
func WorktreeHere(worktree, gitDir string) bool {
	if worktree == "" {
		return true
	}
	b, err := os.ReadFile(filepath.Join(worktree, ".git"))
	if err != nil {
		return true // gone (or a plain directory): nothing says it is another's
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return true
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(worktree, dir)
	}
	got, err := filepath.EvalSymlinks(filepath.Dir(dir))
	if err != nil {
		return true // its repository is gone: nothing says it is another's
	}
	want, err := filepath.EvalSymlinks(filepath.Join(gitDir, "worktrees"))
	if err != nil {
		return false // this repository has no worktrees; that one's has
	}
	return want == got
}

// GitHubDue counts the PENDING GitHub calls due for a replay: each waits
// a minute after its last try, doubling with every try, up to an hour.
func GitHubDue(sn *gitstate.Snapshot, now time.Time) (int, error) {
	if sn.Commit() == "" {
		return 0, nil
	}
	n := 0
	err := walkSnapshot(sn, dirGitHub, func(g GitHubCall) {
		if g.State != GitHubPending {
			return
		}
		wait := time.Minute << min(max(g.Attempts-1, 0), 6)
		if wait > time.Hour {
			wait = time.Hour
		}
		if now.Sub(g.UpdatedAt) >= wait {
			n++
		}
	})
	return n, err
}
