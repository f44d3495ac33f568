package work

import (
	"context"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/instance"
)

// What `git codex watch` looks at before it calls reap or github_retry:
// both are tool calls that commit, so the watcher first asks, without a
// commit, whether there is anything for them to do.

// ReapDue lists the instances reap would act on now: a live instance of
// this machine whose session died or is gone, and a review running past
// review.timeout_hours. An instance another machine (or clone) spawned
// is not this machine's to reap (RunsHere).
func ReapDue(ctx context.Context, sn *gitstate.Snapshot, keys *tools.ConfigKeys, env tools.Env, repo tools.Repo, now time.Time) ([]string, error) {
	if sn.Commit() == "" {
		return nil, nil
	}
	machine, err := repo.MachineID()
	if err != nil {
		return nil, err
	}
	views, err := instance.LiveInstances(ctx, sn, keys, env, machine)
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
		if v.Status == "" || instance.Final(v.Status) || v.Status == tools.StatusStarting || v.CleanedAt != nil || !instance.RunsHere(v.Agent, machine, repo.GitDir()) {
			continue
		}
		switch {
		case v.Live == instance.LiveDead || v.Live == instance.LiveMissing:
			due = append(due, v.ID)
		case v.Status == tools.StatusReviewing && timeout > 0 && now.Sub(v.CreatedAt) > timeout:
			due = append(due, v.ID)
		}
	}
	return due, nil
}

// GitHubDue counts the PENDING GitHub calls due for a replay: each waits
// a minute after its last try, doubling with every try, up to an hour.
func GitHubDue(sn *gitstate.Snapshot, now time.Time) (int, error) {
	if sn.Commit() == "" {
		return 0, nil
	}
	n := 0
	err := tools.WalkSnapshot(sn, forge.Dir, func(g forge.GitHubCall) {
		if g.State != forge.GitHubPending {
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
