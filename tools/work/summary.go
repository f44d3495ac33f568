package work

import (
	"sort"

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
// person or a registered agent.
func Summary(sn *gitstate.Snapshot, caller string) (StatusSummary, error) {
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
	err = tools.WalkSnapshot(sn, dirTasks, func(t Task) {
		s.Tasks[t.State]++
		if t.State == TaskInProgress || t.State == TaskReview {
			s.Active = append(s.Active, t)
		}
	})
	sort.Slice(s.Active, func(i, j int) bool { return s.Active[i].CreatedAt.Before(s.Active[j].CreatedAt) })
	return s, err
}
