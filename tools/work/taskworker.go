package work

import (
	"context"
	"strings"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// taskWorkerName is the id of the worker spawned for a task:
// task-<id>-<slug of its title> (seed 003's worktree name), at most 64
// characters.
func taskWorkerName(t Task) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(t.Title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	slug := b.String()
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	name := "task-" + strings.TrimPrefix(t.ID, "t-")
	if slug != "" {
		name += "-" + slug
	}
	return name
}

// spawnTaskWorker spawns a worker instance for a new task (config
// task.spawn_worker) with spawn's machinery, and gives it the task: t is
// IN_PROGRESS, held by the worker, when it returns. The worker starts
// from its epic's branch when that exists. If the instance fails to
// start, the task is given back (PENDING) in the same commit that records
// the failure. It returns the worker's id.
func spawnTaskWorker(ctx context.Context, c *tools.Call, t *Task, epic *Epic) (string, error) {
	if !tools.Allows(c.Config, c.Caller.Type, instance.SpawnTool.Permission) {
		return "", tools.Errorf(tools.PermissionDenied, "task.spawn_worker is on, but a %s may not spawn instances (permission %s); create the task without it, or ask a supervisor", c.Caller.Type, instance.SpawnTool.Permission).
			With("permission", instance.SpawnTool.Permission).With("agent_type", string(c.Caller.Type))
	}
	name := taskWorkerName(*t)
	prompt := t.Title + "\n" + t.Description + "\n\nThis is task " + t.ID + "; you hold it (see it and its comments with agent_get_task)."
	in := instance.SpawnIn{Type: string(tools.TypeWorker), Prompt: prompt, Name: name}
	if epic != nil {
		prompt += " It belongs to epic " + epic.ID + " (" + epic.Title + "): when your work is committed, open a pull request into " + epic.Branch + " with create_pull_request; the supervisor reviews it."
		in.Prompt = prompt
		if c.Repo.BranchExists(ctx, epic.Branch) {
			in.From = "refs/heads/" + epic.Branch
		}
	}
	id := t.ID
	giveBack := func(rc *tools.Call) error {
		cur, err := getTask(rc.Tx, id)
		if err != nil || holderOf(cur) != name || taskFinal(cur.State) {
			return nil // gone, or moved on meanwhile: leave it
		}
		cur.Claim, cur.State = nil, TaskPending
		cur.UpdatedAt, cur.UpdatedBy, cur.Clock = rc.Tx.Now(), rc.Caller.ID, rc.Tx.Clock()
		// (the worker's record, FAILED, is written after this and keeps
		// the task in its held_tasks; the task's own claim says it is not)
		return rc.Tx.Put(taskPath(cur.ID), cur)
	}
	if _, err := instance.Spawn(ctx, c, in, giveBack); err != nil {
		return "", err
	}
	if _, err := grantTask(c, t, name); err != nil {
		return "", err
	}
	return name, nil
}
