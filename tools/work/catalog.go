package work

import (
	"context"
	"slices"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
)

// Catalog is what this package adds to git codex: its tools, its steps in
// the call pipeline, and the record kinds and config keys its nouns
// define, for the assembly (tools/builtin) to hand the framework. A fresh
// value on every call: a few small slices, cheaper than a shared one that
// someone could change.
func Catalog() tools.Catalog {
	return tools.Catalog{
		Tools:      nounTools(),
		Hooks:      hooks(),
		Kinds:      nounKinds(),
		ConfigKeys: nounConfigKeys(),
	}
}

// nounTools are the tools of the nouns.
func nounTools() []*tools.Tool {
	return []*tools.Tool{
		AgentGetStatus, AgentListTool, AgentShow, AgentRegister, AgentRotateToken,
		TaskCreate, TaskListTool, TaskShow, TaskClaim, TaskAssign, TaskUpdateStatus, TaskRelease, TaskAddComment,
		EpicCreate, EpicListTasks, AgentGetTask, AgentGetEpic,
		EpicGetReviewQueue, EpicApprovePR, EpicRequestChanges, EpicReadFile, EpicCreateEpicPR,
		ConflictListTool,
		CreatePullRequest, CreateIssues, GitHubRetry, GitHubReviewsTool,
		Archive, ArchiveRestore,
	}
}

// hooks are the nouns' steps in the call pipeline: a failure its caller cannot
// fix is mailed to whoever must hear of it (escalate).
func hooks() tools.Hooks {
	return tools.Hooks{
		OnFailure:    []func(ctx context.Context, st *gitstate.Store, c *tools.Call, res tools.Result, commit string) string{escalate},
		SettleClaims: restoreInvariants,
		// seed 000 calls create_pull_request create_pr in places
		UnknownTool: []func(string) *tools.Error{tools.Renamed(map[string]string{"create_pr": "create_pull_request"})},
	}
}

// nounConfigKeys are the settings the nouns own, registered here as their
// tools are: each noun lists its keys next to the code that reads them.
// (The framework's own, auth.* policy.* timeout.* retry.*, are config.go's.)
func nounConfigKeys() []tools.ConfigKey {
	return slices.Concat(
		forge.Keys(), escalationKeys(), taskKeys(), mcpKeys(), wakeKeys(), retentionKeys(), githubReviewKeys(),
	)
}

// nounKinds are the nouns' record kinds, in the order docs/STATE.md lists
// them (after the framework's config and agents), each defined by the
// noun that owns it (its Kind: where its records live, how they decode
// and validate, merge, and who holds them).
func nounKinds() []tools.Kind {
	return []tools.Kind{
		taskKind(),
		tools.ConflictKind(),
		forge.CallKind(), escalationKind(),
		epicKind(), commentKind(), wakeKind(), githubReviewKind(),
	}
}
