package work

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// ArchiveRestoreIn is archive_restore's input.
type ArchiveRestoreIn struct {
	Record string `json:"record" jsonschema:"the record to put back: its path in the state (mail/alice/x/y/m-….json, as git ls-tree -r <archive> lists it) or its id (m-…, an instance id: its agent and wake records come back together)"`
}

// ArchiveRestoreOut is what archive_restore put back.
type ArchiveRestoreOut struct {
	Record     string    `json:"record" jsonschema:"the restored record's id"`
	Paths      []string  `json:"paths" jsonschema:"the records written back on the tip, as they were archived"`
	Archive    string    `json:"archive" jsonschema:"the record archive they came from (the newest that holds them and checks out)"`
	Commit     string    `json:"archive_commit" jsonschema:"that archive's commit (the Codex-Restored-From trailer names it)"`
	StateTip   string    `json:"state_tip" jsonschema:"the refs/codex/state commit the archive took them from"`
	ArchivedAt time.Time `json:"archived_at"`
}

// ArchiveRestore puts an archived record back on the tip (retention,
// docs/STATE.md "how to get it back"): the version the newest record
// archive holds, one transaction, audited with the archive it came from.
// An archive is believed only as a merge believes it (gitstate
// RestoreArchived), so a forged archive ref cannot write a record.
var ArchiveRestore = tools.Define("archive_restore", "state.archive",
	"Put a record that `git codex archive` took off the live state back on it, as the newest record archive holding it has it (one commit, Codex-Restored-From naming the archive). "+
		"Refused with ALREADY_EXISTS when the record is live, RESOURCE_NOT_FOUND when no archive that checks out holds it. A record restored is taken again by the next archive that finds it old enough.",
	tools.CLI{Path: "archive restore", Args: []string{"record"}},
	func(ctx context.Context, c *tools.Call, in ArchiveRestoreIn) (*ArchiveRestoreOut, error) {
		key := strings.TrimSpace(in.Record)
		if key == "" {
			return nil, tools.Errorf(tools.InvalidInput, "archive restore takes a record's path or id")
		}
		got, err := c.Tx.RestoreArchived(ctx, key, c.Layout())
		switch {
		case errors.Is(err, gitstate.ErrInvalidPath):
			return nil, tools.Errorf(tools.InvalidInput, "%q is not a record's path or id", key).With("record", key)
		case errors.Is(err, gitstate.ErrRecordLive):
			return nil, tools.Errorf(tools.AlreadyExists, "nothing to restore: %v", err).With("record", key)
		case errors.Is(err, gitstate.ErrNotArchived):
			return nil, tools.Errorf(tools.ResourceNotFound, "%v (git for-each-ref refs/codex/archive/ lists the archives)", err).With("record", key)
		case err != nil:
			return nil, err
		}
		id := strings.TrimSuffix(path.Base(key), ".json")
		c.Target(id)
		c.Summarize("%s restored %s from %s", c.Caller.ID, strings.Join(got.Paths, ", "), got.Archive)
		return &ArchiveRestoreOut{Record: id, Paths: got.Paths, Archive: got.Archive, Commit: got.Commit, StateTip: got.StateTip, ArchivedAt: got.ArchivedAt}, nil
	})
