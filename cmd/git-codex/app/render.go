package app

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/decision"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/work"
)

// writeJSON prints v as indented JSON: the --json form of every read.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// render prints a tool's result for a person: a table on a terminal,
// tab-separated lines when piped (table.go), or key/value lines.
// Tools without a renderer print JSON.
func (e *env) render(tool string, data any) error {
	if ok, err := e.renderInstance(data); ok {
		return err
	}
	if ok, err := e.renderDelegation(data); ok {
		return err
	}
	if ok, err := e.renderGitHub(data); ok {
		return err
	}
	w := e.stdout
	switch d := data.(type) {
	case mail.MailSent:
		fmt.Fprintf(w, "sent %s to %s\n", d.MailID, d.To)
	case mail.Inbox:
		if len(d.Mails) == 0 {
			fmt.Fprintf(e.stderr, "no mail (%d unread)\n", d.UnreadCount)
			return nil
		}
		tp := e.table("ID", "FROM", "SUBJECT", "SENT", "READ")
		for _, m := range d.Mails {
			tp.AddField(m.ID)
			tp.AddField(m.From)
			tp.AddField(m.Subject)
			tp.AddField(e.when(m.CreatedAt))
			tp.AddField(yesNo(m.IsRead))
			tp.EndRow()
		}
		return tp.Render()
	case mail.Mail:
		fmt.Fprintf(w, "id:      %s\nfrom:    %s (%s)\nto:      %s\nsubject: %s\nsent:    %s\n",
			d.ID, d.From, d.FromType, d.To, d.Subject, d.CreatedAt.Format(time.RFC3339))
		if d.InReplyTo != "" {
			fmt.Fprintf(w, "reply to: %s\n", d.InReplyTo)
		}
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(d.Body, "\n"))
	case decision.DecisionLogged:
		fmt.Fprintf(w, "logged %s\n", d.LogID)
	case decision.DecisionList:
		if len(d.Decisions) == 0 {
			fmt.Fprintln(e.stderr, "no decisions; log one with `git codex decision log --title <title> --body <why>`")
			return nil
		}
		tp := e.table("ID", "WHEN", "BY", "TITLE")
		for _, x := range d.Decisions {
			tp.AddField(x.ID)
			tp.AddField(e.when(x.CreatedAt))
			tp.AddField(x.Actor)
			tp.AddField(oneLine(x.Title))
			tp.EndRow()
		}
		if err := tp.Render(); err != nil {
			return err
		}
		if d.Count > len(d.Decisions) {
			fmt.Fprintf(e.stderr, "showing %d of %d decisions; see more with --limit\n", len(d.Decisions), d.Count)
		}
	case decision.Decision:
		fmt.Fprintf(w, "id:      %s\ntitle:   %s\nby:      %s (%s)\nlogged:  %s\n\n%s\n",
			d.ID, d.Title, d.Actor, d.ActorType, d.CreatedAt.Format(time.RFC3339), strings.TrimRight(d.Body, "\n"))
	case work.AgentRegistered:
		if err := e.render(tool, d.Agent); err != nil {
			return err
		}
		fmt.Fprintf(w, "token:       %s\n", d.Token)
		fmt.Fprintln(e.stderr, "The token is shown only now: give it to the agent as CODEX_TOKEN.")
	case work.AgentToken:
		fmt.Fprintf(w, "id:          %s\ntoken:       %s\n", d.ID, d.Token)
		fmt.Fprintln(e.stderr, "The token is shown only now: give it to the agent as CODEX_TOKEN. The old one no longer works.")
	case work.AgentStatus:
		if err := e.render(tool, d.Agent); err != nil {
			return err
		}
		for _, kv := range [][2]string{{"task", d.CurrentTaskID}, {"epic", d.CurrentEpicID}} {
			if kv[1] != "" {
				fmt.Fprintf(w, "%-12s %s\n", kv[0]+":", kv[1])
			}
		}
	case tools.Agent:
		fmt.Fprintf(w, "id:          %s\ntype:        %s\nstate:       %s\n", d.ID, d.Type, d.State)
		for _, kv := range [][2]string{{"status", d.Status}, {"reason", d.StatusReason}, {"supervisor", d.Supervisor}, {"review of", d.ReviewOf},
			{"worktree", d.Worktree}, {"branch", d.Branch}, {"tmux session", d.TmuxSession}, {"launcher", d.Launcher}, {"tasks", strings.Join(d.HeldTasks, " ")}} {
			if kv[1] != "" {
				fmt.Fprintf(w, "%-12s %s\n", kv[0]+":", kv[1])
			}
		}
		if d.PR != nil {
			state := d.PR.State
			if d.PR.Merged {
				state = "merged"
			}
			if state != "" {
				state = ", " + state
			}
			fmt.Fprintf(w, "pull request: #%d %s (%s into %s%s)\n", d.PR.Number, d.PR.URL, d.PR.Head, d.PR.Base, state)
		}
		if d.LastActiveAt != nil {
			fmt.Fprintf(w, "last active: %s\n", d.LastActiveAt.Format(time.RFC3339))
		}
		if !d.CreatedAt.IsZero() {
			fmt.Fprintf(w, "created:     %s by %s\n", d.CreatedAt.Format(time.RFC3339), d.CreatedBy)
		}
	case work.AgentList:
		if len(d.Agents) == 0 {
			fmt.Fprintln(e.stderr, "no agents; register one with `git codex agent add <id> --type <type>`")
			return nil
		}
		tp := e.table("ID", "TYPE", "STATE", "LAST ACTIVE")
		for _, a := range d.Agents {
			tp.AddField(a.ID)
			tp.AddField(string(a.Type))
			tp.AddField(a.State)
			if a.LastActiveAt != nil {
				tp.AddField(e.when(*a.LastActiveAt))
			} else {
				tp.AddField("-")
			}
			tp.EndRow()
		}
		return tp.Render()
	case *tools.ConfigValues:
		return e.render(tool, *d)
	case *tools.ConfigValue:
		return e.render(tool, *d)
	case tools.ConfigValues:
		tp := e.table("KEY", "VALUE", "SET BY")
		for _, s := range d.Settings {
			tp.AddField(s.Key)
			tp.AddField(compactJSON(s.Value))
			switch {
			case s.Default:
				tp.AddField("(default)")
			case s.Local:
				tp.AddField("(git config)")
			default:
				tp.AddField(s.SetBy)
			}
			tp.EndRow()
		}
		if err := tp.Render(); err != nil {
			return err
		}
		for _, s := range d.Settings {
			e.warnIgnored(s.Ignored)
		}
	case tools.ConfigValue:
		fmt.Fprintf(w, "%s = %s", d.Key, compactJSON(d.Value))
		switch {
		case d.Default:
			fmt.Fprint(w, " (default)")
		case d.Local:
			fmt.Fprintf(w, " (git config %s)", d.GitKey)
		}
		fmt.Fprintln(w)
		e.warnIgnored(d.Ignored)
	case work.Task:
		fmt.Fprintf(w, "id:          %s\ntitle:       %s\nstate:       %s\n", d.ID, d.Title, d.State)
		if d.Claim != nil {
			fmt.Fprintf(w, "holder:      %s since %s\n", d.Claim.Holder, d.Claim.At.Format(time.RFC3339))
		} else {
			fmt.Fprintln(w, "holder:      nobody")
		}
		if !d.CreatedAt.IsZero() {
			fmt.Fprintf(w, "created:     %s by %s\n", d.CreatedAt.Format(time.RFC3339), d.CreatedBy)
		}
		if d.UpdatedBy != "" && !d.UpdatedAt.Equal(d.CreatedAt) {
			fmt.Fprintf(w, "updated:     %s by %s\n", d.UpdatedAt.Format(time.RFC3339), d.UpdatedBy)
		}
		if desc := strings.TrimRight(d.Description, "\n"); desc != "" {
			fmt.Fprintf(w, "\n%s\n", desc)
		}
	case work.TaskList:
		if len(d.Tasks) == 0 {
			fmt.Fprintln(e.stderr, "no tasks")
			return nil
		}
		tp := e.table("ID", "STATE", "HOLDER", "TITLE")
		for _, t := range d.Tasks {
			tp.AddField(t.ID)
			tp.AddField(t.State)
			if t.Claim != nil {
				tp.AddField(t.Claim.Holder)
			} else {
				tp.AddField("-")
			}
			tp.AddField(oneLine(t.Title))
			tp.EndRow()
		}
		return tp.Render()
	case lock.LockAcquired:
		if d.LockToken == "" {
			return e.render(tool, d.Lock)
		}
		fmt.Fprintf(w, "cycle:      %s\nrole:       %s\nlock_token: %s\n", d.CycleID, d.Role, d.LockToken)
	case lock.Lock:
		if d.Claim == nil {
			fmt.Fprintf(w, "lock %s is free\n", d.Name)
			return nil
		}
		fmt.Fprintf(w, "lock %s held by %s since %s\n", d.Name, d.Claim.Holder, d.Claim.At.Format(time.RFC3339))
		if d.ExpiresAt != nil {
			fmt.Fprintf(w, "expires: %s\n", d.ExpiresAt.Format(time.RFC3339))
		}
		if d.Reason != "" {
			fmt.Fprintf(w, "reason:  %s\n", d.Reason)
		}
	case lock.LockList:
		if len(d.Locks) == 0 {
			fmt.Fprintln(e.stderr, "no locks held")
			return nil
		}
		tp := e.table("NAME", "HOLDER", "SINCE", "EXPIRES", "REASON")
		for _, l := range d.Locks {
			tp.AddField(l.Name)
			if l.Claim != nil {
				tp.AddField(l.Claim.Holder)
				tp.AddField(e.when(l.Claim.At))
			} else {
				tp.AddField("-")
				tp.AddField("-")
			}
			if l.ExpiresAt != nil {
				tp.AddField(e.expires(*l.ExpiresAt))
			} else {
				tp.AddField("-")
			}
			if r := oneLine(l.Reason); r != "" {
				tp.AddField(r)
			} else {
				tp.AddField("-")
			}
			tp.EndRow()
		}
		return tp.Render()
	case work.ConflictList:
		if len(d.Conflicts) == 0 {
			fmt.Fprintln(e.stderr, "no conflicts")
			return nil
		}
		tp := e.table("ID", "KIND", "RESOURCE", "WINNER", "LOSER", "WHEN")
		for _, c := range d.Conflicts {
			tp.AddField(c.ID)
			tp.AddField(c.Kind)
			tp.AddField(c.Resource)
			winner := "(" + c.Rule + ")" // ended: nobody holds it
			if c.Winner != nil {
				winner = c.Winner.Holder
			}
			tp.AddField(winner)
			tp.AddField(c.Loser.Holder)
			tp.AddField(e.when(c.CreatedAt))
			tp.EndRow()
		}
		return tp.Render()
	default:
		if ok, err := e.renderPrompt(data); ok {
			return err
		}
		return e.renderFields(data)
	}
	return nil
}

func (e *env) table(headers ...string) *table {
	return newTable(e.stdout, e.tty, e.width, headers...)
}

// when formats a time: relative on a terminal, RFC 3339 for scripts.
func (e *env) when(t time.Time) string {
	if !e.tty {
		return t.Format(time.RFC3339)
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Format("2006-01-02")
}

// expires formats a time that may lie ahead (a lock's expiry): like when,
// but "in 5m" for the future on a terminal.
func (e *env) expires(t time.Time) string {
	if !e.tty || !t.After(time.Now()) {
		return e.when(t)
	}
	d := time.Until(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("in %ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("in %dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("in %dh", int(d.Hours()))
	}
	return t.Format("2006-01-02")
}

// oneLine folds free text (a title, a reason) onto one line for a table
// cell, so a newline cannot break a row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// compactJSON renders a value as one line of JSON.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// warnIgnored tells a person that the shared state holds a value of one of
// this machine's settings, which git codex never reads (docs/SECURITY.md).
func (e *env) warnIgnored(s *tools.IgnoredSetting) {
	if s == nil {
		return
	}
	fmt.Fprintf(e.stderr, "git codex: warning: %s\n", ignoredNote(*s))
}

// ignoredNote says what an ignored shared value is, for sync and config.
// Who set it is the peer's text: quoted unless plainly printable.
func ignoredNote(s tools.IgnoredSetting) string {
	by := s.SetBy
	if strings.IndexFunc(by, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		by = strconv.Quote(by)
	}
	return fmt.Sprintf("the shared state holds a value of %s (set by %s), which is never used: it is this machine's setting, read from git config %s only; "+
		"`git codex config set` or `unset` of it clears the shared value", s.Key, by, s.GitKey)
}
