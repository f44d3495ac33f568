package work

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/mail"
)

// StatusSummary is what `git codex status` shows of the state, read
// without a transaction (status is not a tool call and writes nothing).
type StatusSummary struct {
	Agents map[string]int `json:"agents"` // by type
	Unread int            `json:"unread"` // the caller's unread mail
	// Locks are the locks held now (expired ones too: anyone may take
	// them), by name.
	Locks []lock.Lock `json:"locks"`
	// Tasks counts tasks by state; Active lists the ones being worked on
	// (IN_PROGRESS and REVIEW), oldest first.
	Tasks  map[string]int `json:"tasks"`
	Active []Task         `json:"active_tasks"`
}

// Summary reads what `git codex status` shows for caller, who must be a
// person or a registered agent. Active holds whole task records when
// whole is set (`status --json` prints them), and otherwise only what
// status prints of them: id, title, state, holder and creation time.
func Summary(sn *gitstate.Snapshot, caller string, whole bool) (StatusSummary, error) {
	s := StatusSummary{Agents: map[string]int{}, Locks: []lock.Lock{}, Tasks: map[string]int{}, Active: []Task{}}
	err := tools.WalkSnapshot(sn, tools.DirAgents, func(a tools.Agent) { s.Agents[string(a.Type)]++ })
	if err != nil {
		return StatusSummary{}, err
	}
	c := tools.Caller{ID: caller, Type: tools.TypeHuman}
	if !tools.IsHuman(caller) {
		if _, err := sn.Read(tools.AgentPath(caller)); err != nil {
			return StatusSummary{}, tools.Errorf(tools.AgentNotFound, "%q is not a registered agent; register it with `git codex agent add %s --type <type>`", caller, caller).With("agent_id", caller)
		}
		c.Type = ""
	}
	err = tools.WalkSnapshot(sn, mail.RecipientDir(mail.InboxOf(c)), func(m mail.Mail) {
		if !m.IsRead {
			s.Unread++
		}
	})
	if err != nil {
		return StatusSummary{}, err
	}
	err = tools.WalkSnapshot(sn, lock.Dir, func(l lock.Lock) {
		if l.Claim != nil {
			s.Locks = append(s.Locks, l)
		}
	})
	if err != nil {
		return StatusSummary{}, err
	}
	sort.Slice(s.Locks, func(i, j int) bool { return s.Locks[i].Name < s.Locks[j].Name })
	v, err := sn.Reduce(dirTasks, taskCounts())
	if err != nil {
		return StatusSummary{}, err
	}
	tasks := v.(taskPart)
	for state, n := range tasks.Counts {
		s.Tasks[state] = n
	}
	active := append([]taskHead(nil), tasks.Active...)
	sort.Slice(active, func(i, j int) bool { return active[i].CreatedAt.Before(active[j].CreatedAt) })
	for _, h := range active {
		if !whole {
			s.Active = append(s.Active, h.task())
			continue
		}
		var t Task
		data, err := sn.Read(h.Path)
		if err == nil {
			err = json.Unmarshal(data, &t)
		}
		if err != nil {
			return StatusSummary{}, fmt.Errorf("read task %s: %w", h.Path, err)
		}
		s.Active = append(s.Active, t)
	}
	return s, nil
}

// taskPart is what status shows of the tasks under a directory: how many
// there are in each state, and the heads of the active ones.
type taskPart struct {
	Counts map[string]int `json:"counts"`
	Active []taskHead     `json:"active"`
}

// taskHead is what status prints of an active task, and where its record
// is. A part kept whole tasks before (issue 27): at a simulated week, with
// hundreds of tasks in progress, decoding that file was ~20 ms of every
// status.
type taskHead struct {
	Path      string     `json:"path"`
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	State     string     `json:"state"`
	Claim     *claimHead `json:"claim,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// claimHead is the holder of a task's claim.
type claimHead struct {
	Holder string `json:"holder"`
}

// task is the task as far as its head says.
func (h taskHead) task() Task {
	t := Task{ID: h.ID, Title: h.Title, State: h.State, CreatedAt: h.CreatedAt}
	if h.Claim != nil {
		t.Claim = &tools.Claim{Holder: h.Claim.Holder}
	}
	return t
}

// taskCounts reads the tasks by directory (gitstate.Reduction), its parts
// kept for the next process: tasks never leave the tip (~6k at a month of
// the simulated team), and status read every one of them at every call.
func taskCounts() gitstate.Reduction {
	return gitstate.Reduction{
		// the parts hold heads (status.tasks held whole tasks)
		Name: "status.taskheads",
		Leaf: func(path string, data []byte) (any, error) {
			var t taskHead
			if err := json.Unmarshal(data, &t); err != nil {
				return nil, fmt.Errorf("decode %s: %w", path, err)
			}
			p := taskPart{Counts: map[string]int{t.State: 1}}
			if t.State == TaskInProgress || t.State == TaskReview {
				t.Path = path
				p.Active = []taskHead{t}
			}
			return p, nil
		},
		Join: func(parts []any) any {
			out := taskPart{Counts: map[string]int{}}
			for _, v := range parts {
				p := v.(taskPart)
				for state, n := range p.Counts {
					out.Counts[state] += n
				}
				out.Active = append(out.Active, p.Active...)
			}
			return out
		},
		Keep: &gitstate.KeepParts{
			Encode: func(part any) ([]byte, error) { return json.Marshal(part) },
			Decode: func(data []byte) (any, error) {
				var p taskPart
				err := json.Unmarshal(data, &p)
				return p, err
			},
		},
	}
}
