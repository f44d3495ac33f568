package work

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/delegate"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/review"
)

// Retention (issue 27, docs/STATE.md "Retention"): what agents make and
// never end (read mail, ended instances, finished delegations and GitHub
// calls, settled conflicts) leaves the tip after some days, into an
// archive ref that sync carries, so the tree every view and merge reads
// holds what is live. History is never rewritten: every version stays in
// refs/codex/state's history.

// The kinds of old records archive takes, by the name its input and the
// retention.<kind>.days settings use.
const (
	retainMail        = mail.Retain
	retainInstances   = tools.RetainInstances
	retainDelegations = delegate.Retention
	retainGitHub      = forge.Retention
	retainConflicts   = tools.RetainConflicts
	// reads are no records: this machine's reads refs, folded
	retainReads = "reads"
)

func retentionKinds() []string {
	return []string{retainMail, retainInstances, retainDelegations, retainGitHub, retainConflicts, retainReads}
}

const defaultRetentionDays = 30

// retentionKeys are the settings of retention: one for all kinds, and one
// per kind that, once set, overrides it.
func retentionKeys() []tools.ConfigKey {
	keys := []tools.ConfigKey{{Name: "retention.days", Kind: "int", Default: defaultRetentionDays,
		Doc: "`git codex archive` takes records that ended (mail read, instances ended and cleaned up, delegations and GitHub calls finished, conflicts settled) this many days ago off the tip, into refs/codex/archive/records-*; retention.<kind>.days overrides it for one kind"}}
	for _, k := range retentionKinds() {
		keys = append(keys, tools.ConfigKey{Name: "retention." + k + ".days", Kind: "int", Default: 0,
			Doc: "days before `git codex archive` takes " + retentionDoc(k) + "; 0 (unset): retention.days"})
	}
	return keys
}

func retentionDoc(kind string) string {
	switch kind {
	case retainMail:
		return "mail read that long ago"
	case retainInstances:
		return "instances that ended (and were cleaned up) that long ago"
	case retainDelegations:
		return "delegated sessions that finished that long ago"
	case retainGitHub:
		return "GitHub calls DONE or FAILED that long ago"
	case retainConflicts:
		return "conflict records made that long ago"
	}
	return "this machine's reads refs of days that ended that long ago, folded into one commit a day"
}

// retentionDays is the setting for one kind.
func retentionDays(c *tools.Config, kind string) int {
	if n := c.IntValue("retention." + kind + ".days"); n > 0 {
		return n
	}
	return c.IntValue("retention.days")
}

// ArchiveIn is archive's input.
type ArchiveIn struct {
	OlderThan string   `json:"older_than,omitempty" jsonschema:"archive what ended longer ago than this: 30d, 12h, 45m, or 0 for everything that ended; default: the retention.days settings, per kind"`
	Kinds     []string `json:"kinds,omitempty" jsonschema:"only these kinds: mail, instances, delegations, github, conflicts, reads (default: all)"`
	DryRun    bool     `json:"dry_run,omitempty" jsonschema:"count what would be archived; change nothing"`
}

// ArchiveOut is what archive did.
type ArchiveOut struct {
	Ref         string         `json:"ref,omitempty" jsonschema:"the archive ref holding the records taken off the tip (none when nothing was old enough, or a dry run)"`
	From        string         `json:"from" jsonschema:"the refs/codex/state commit the records were taken from: ?at= it, or git codex show, still shows them"`
	Records     map[string]int `json:"records" jsonschema:"records archived (or that would be), by kind"`
	Total       int            `json:"total"`
	ReadsFolded []string       `json:"reads_folded" jsonschema:"this machine's reads refs folded into one commit each"`
	DryRun      bool           `json:"dry_run,omitempty"`
}

// ArchiveManifestRecords is manifest.json at the root of a record archive.
type ArchiveManifestRecords struct {
	ArchivedAt time.Time         `json:"archived_at"`
	ArchivedBy string            `json:"archived_by"`
	StateTip   string            `json:"state_tip" jsonschema:"the refs/codex/state commit the records were taken from"`
	Cutoffs    map[string]string `json:"cutoffs" jsonschema:"by kind: records that ended before this time were taken"`
	Records    map[string]int    `json:"records"`
}

var olderThanPattern = regexp.MustCompile(`^([0-9]{1,6})([dhm]?)$`)

// parseOlderThan reads 30d, 12h, 45m or a bare number of days.
func parseOlderThan(s string) (time.Duration, error) {
	m := olderThanPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, tools.Errorf(tools.InvalidInput, "older_than takes a number of days, hours or minutes (30d, 12h, 45m, 0), not %q", s).With("older_than", s)
	}
	n, _ := strconv.Atoi(m[1])
	unit := 24 * time.Hour
	switch m[2] {
	case "h":
		unit = time.Hour
	case "m":
		unit = time.Minute
	}
	return time.Duration(n) * unit, nil
}

// Archive takes old records off the tip into a record archive.
var Archive = tools.Define("archive", "state.archive",
	"Retention: take records that ended long ago (mail read, instances ended and cleaned up, delegations and GitHub calls finished, conflicts settled) off the live state into refs/codex/archive/records-<day>-<id>, which sync carries, and fold this machine's reads refs of old days into one commit a day. "+
		"Nothing is lost: the state's history keeps every version (git codex show, log, ?at=), and the archive holds each record at its path. Unread mail, live instances, pending calls, tasks, epics, locks and decisions always stay.",
	tools.CLI{Path: "archive"},
	func(ctx context.Context, c *tools.Call, in ArchiveIn) (*ArchiveOut, error) {
		kinds := retentionKinds()
		if len(in.Kinds) > 0 {
			for _, k := range in.Kinds {
				if !slices.Contains(kinds, k) {
					return nil, tools.Errorf(tools.InvalidInput, "archive takes the kinds %s, not %q", strings.Join(kinds, ", "), k).With("kind", k)
				}
			}
			kinds = in.Kinds
		}
		now := c.Tx.Now()
		cutoffs := map[string]time.Time{}
		for _, k := range kinds {
			cutoffs[k] = now.AddDate(0, 0, -retentionDays(c.Config, k))
		}
		if in.OlderThan != "" {
			d, err := parseOlderThan(in.OlderThan)
			if err != nil {
				return nil, err
			}
			for _, k := range kinds {
				cutoffs[k] = now.Add(-d)
			}
		}
		out := &ArchiveOut{From: c.Tx.Parent(), Records: map[string]int{}, ReadsFolded: []string{}, DryRun: in.DryRun}
		files, err := archivable(c.Tx, cutoffs)
		if err != nil {
			return nil, err
		}
		for path, kind := range files.kind {
			out.Records[kind]++
			out.Total++
			if !in.DryRun {
				if err := c.Tx.Delete(path); err != nil {
					return nil, err
				}
			}
		}
		if out.Total > 0 && !in.DryRun {
			out.Ref = gitstate.RecordArchivePrefix + now.UTC().Format(time.DateOnly) + "-" + strings.TrimPrefix(c.Tx.NewID("a"), "a-")
			man := ArchiveManifestRecords{ArchivedAt: now, ArchivedBy: c.Caller.ID, StateTip: out.From, Cutoffs: map[string]string{}, Records: out.Records}
			for k, t := range cutoffs {
				man.Cutoffs[k] = t.UTC().Format(time.RFC3339)
			}
			b, err := json.MarshalIndent(man, "", "  ")
			if err != nil {
				return nil, err
			}
			files.data["manifest.json"] = append(b, '\n')
			// the archive's commit is audited as the call is (auditRecord)
			summary := fmt.Sprintf("%d records archived by %s from %s", out.Total, c.Caller.ID, out.From)
			if err := c.Tx.CommitAt(out.Ref, files.data, c.AuditOf(out.From, summary)); err != nil {
				return nil, err
			}
			c.Target(out.Ref)
		}
		c.Summarize("%s archived %s", c.Caller.ID, archiveSummary(out))
		if cut, ok := cutoffs[retainReads]; ok && !in.DryRun {
			// the reads refs are this machine's, outside the state: folded
			// after the commit, outside the writer lock
			c.After(func(ctx context.Context, f *tools.Followup) error {
				folded, err := f.Store.FoldReads(ctx, cut, now)
				out.ReadsFolded = append(out.ReadsFolded, folded...)
				return err
			})
		}
		return out, nil
	})

func archiveSummary(out *ArchiveOut) string {
	if out.Total == 0 {
		return "nothing (no record old enough)"
	}
	var parts []string
	for k, n := range out.Records {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ") + " to " + out.Ref
}

// archiveSet is the records archive takes: path -> content, and path ->
// kind (retention's name).
type archiveSet struct {
	data map[string][]byte
	kind map[string]string
}

func (a *archiveSet) add(path, kind string, data []byte) {
	a.data[path] = data
	a.kind[path] = kind
}

// archivable finds the records each kind's cutoff lets go. What a live
// record needs stays: unread mail, instances that hold tasks, own a
// review or still have a worktree or session, and every record of kinds
// not listed (tasks, epics, locks, decisions, feedback, relationships).
func archivable(tx *gitstate.Tx, cutoffs map[string]time.Time) (*archiveSet, error) {
	set := &archiveSet{data: map[string][]byte{}, kind: map[string]string{}}
	before := func(kind string, t *time.Time) bool {
		cut, ok := cutoffs[kind]
		return ok && t != nil && !t.IsZero() && t.Before(cut)
	}
	walk := func(kind, dir string, take func(path string, data []byte) (bool, error)) error {
		if _, ok := cutoffs[kind]; !ok {
			return nil
		}
		return tx.Walk(dir, func(path string, data []byte) error {
			ok, err := take(path, data)
			if err != nil {
				return fmt.Errorf("archive: %s: %w", path, err)
			}
			if ok {
				set.add(path, kind, data)
			}
			return nil
		})
	}
	err := walk(retainMail, mail.Dir, func(_ string, data []byte) (bool, error) {
		var m mail.Mail
		err := json.Unmarshal(data, &m)
		return err == nil && m.IsRead && before(retainMail, m.ReadAt), err
	})
	if err != nil {
		return nil, err
	}
	if _, ok := cutoffs[retainInstances]; ok {
		reviewing := map[string]bool{}
		if err := tools.WalkJSON(tx, review.DirActiveReviews, func(r review.ActiveReview) {
			if r.Claim != nil {
				reviewing[r.Coder], reviewing[r.Claim.Holder] = true, true
			}
		}); err != nil {
			return nil, err
		}
		var gone []string
		err := walk(retainInstances, tools.DirAgents, func(_ string, data []byte) (bool, error) {
			var a tools.Agent
			if err := json.Unmarshal(data, &a); err != nil {
				return false, err
			}
			end := a.EndedAt
			if end == nil {
				end = &a.UpdatedAt
			}
			removed := a.CleanedAt != nil || (a.Worktree == "" && a.TmuxSession == "")
			ok := a.Status != "" && instance.Final(a.Status) && before(retainInstances, end) && removed && len(a.HeldTasks) == 0 && !reviewing[a.ID]
			if ok {
				gone = append(gone, a.ID)
			}
			return ok, nil
		})
		if err != nil {
			return nil, err
		}
		for _, id := range gone {
			// what watch told it of its arrivals goes with it
			if data, err := tx.Read(wakePath(id)); err == nil {
				set.add(wakePath(id), retainInstances, data)
			}
		}
	}
	err = walk(retainDelegations, delegate.Dir, func(_ string, data []byte) (bool, error) {
		var d delegate.Delegation
		err := json.Unmarshal(data, &d)
		return err == nil && d.Status != delegate.DelegationRunning && d.Status != "" && before(retainDelegations, &d.UpdatedAt), err
	})
	if err != nil {
		return nil, err
	}
	err = walk(retainGitHub, forge.Dir, func(_ string, data []byte) (bool, error) {
		var g forge.GitHubCall
		err := json.Unmarshal(data, &g)
		return err == nil && (g.State == forge.GitHubDone || g.State == forge.GitHubFailed) && before(retainGitHub, &g.UpdatedAt), err
	})
	if err != nil {
		return nil, err
	}
	err = walk(retainConflicts, tools.DirConflicts, func(_ string, data []byte) (bool, error) {
		var k tools.Conflict
		err := json.Unmarshal(data, &k)
		return err == nil && before(retainConflicts, &k.CreatedAt), err
	})
	return set, err
}
