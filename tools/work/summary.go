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
	if whole {
		v, err := sn.Reduce(dirTasks, taskCounts("status.tasks", wholeTask))
		if err != nil {
			return StatusSummary{}, err
		}
		tasks := v.(taskPart[Task])
		s.Active = append(s.Active, tasks.Active...)
		sort.Slice(s.Active, func(i, j int) bool { return s.Active[i].CreatedAt.Before(s.Active[j].CreatedAt) })
		s.Tasks = tasks.counts()
		return s, nil
	}
	v, err := sn.Reduce(dirTasks, taskCounts("status.taskheads", headOfTask))
	if err != nil {
		return StatusSummary{}, err
	}
	tasks := v.(taskPart[taskHead])
	heads := append([]taskHead(nil), tasks.Active...)
	sort.Slice(heads, func(i, j int) bool { return heads[i].CreatedAt.Before(heads[j].CreatedAt) })
	for _, h := range heads {
		s.Active = append(s.Active, h.task())
	}
	s.Tasks = tasks.counts()
	return s, nil
}

// taskPart is what status shows of the tasks under a directory: how many
// there are in each state, and the active ones (IN_PROGRESS, REVIEW),
// whole (Task: status --json prints them) or their heads (taskHead:
// status prints no more).
type taskPart[T any] struct {
	Counts map[string]int `json:"counts"`
	Active []T            `json:"active"`
}

// counts is a copy of p's counts, for the caller to keep.
func (p taskPart[T]) counts() map[string]int {
	out := make(map[string]int, len(p.Counts))
	for state, n := range p.Counts {
		out[state] = n
	}
	return out
}

// taskHead is what status prints of an active task. Whole tasks in the
// parts status keeps made its file large where many tasks are active: at a
// simulated week, with 666 tasks in progress, decoding 480 KB of them was
// ~20 ms of every status (issue 27); their heads are half of that file,
// and status decodes only the tasks directory's part when it did not
// change.
type taskHead struct {
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

// wholeTask reads a task whole, for taskCounts.
func wholeTask(data []byte) (state string, t Task, err error) {
	err = json.Unmarshal(data, &t)
	return t.State, t, err
}

// headOfTask reads a task's head, for taskCounts.
func headOfTask(data []byte) (state string, h taskHead, err error) {
	err = json.Unmarshal(data, &h)
	return h.State, h, err
}

// taskCounts reads the tasks by directory (gitstate.Reduction), its parts
// kept for the next process under name: tasks never leave the tip (~6k at
// a month of the simulated team), and status read every one of them at
// every call. read decodes a task into what the parts hold of it.
func taskCounts[T any](name string, read func(data []byte) (string, T, error)) gitstate.Reduction {
	return gitstate.Reduction{
		Name: name,
		Leaf: func(path string, data []byte) (any, error) {
			state, t, err := read(data)
			if err != nil {
				return nil, fmt.Errorf("decode %s: %w", path, err)
			}
			p := taskPart[T]{Counts: map[string]int{state: 1}}
			if state == TaskInProgress || state == TaskReview {
				p.Active = []T{t}
			}
			return p, nil
		},
		Join: func(parts []any) any {
			out := taskPart[T]{Counts: map[string]int{}}
			for _, v := range parts {
				p := v.(taskPart[T])
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
				var p taskPart[T]
				err := json.Unmarshal(data, &p)
				return p, err
			},
		},
	}
}
