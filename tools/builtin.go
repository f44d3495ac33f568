package tools

import (
	"context"
	"slices"

	"github.com/gitcodex/git-codex/gitstate"
)

// Builtin returns a registry of everything git codex ships (BuiltinCatalog).
func Builtin() *Registry { return NewRegistry(BuiltinCatalog()) }

// BuiltinCatalog is every tool git codex ships, the pipeline's hooks, and
// the record kinds and config keys the nouns define: what the framework
// learns of the nouns, handed to NewRegistry. A fresh value on every
// call: a few small slices, cheaper than a shared one that someone could
// change.
func BuiltinCatalog() Catalog {
	return Catalog{
		Tools:       builtinTools(),
		Hooks:       BuiltinHooks(),
		Kinds:       nounKinds(),
		ConfigKeys:  nounConfigKeys(),
		KeyPatterns: nounKeyPatterns(),
	}
}

// builtinTools are the tools of the nouns (and the framework's config
// tools).
func builtinTools() []*Tool {
	return []*Tool{
		MailSend, MailListInbox, MailRead, MailReply,
		LogDecision, DecisionListTool, DecisionShow,
		AgentGetStatus, AgentListTool, AgentShow, AgentRegister, AgentRotateToken,
		ConfigGet, ConfigList, ConfigSet, ConfigUnset, ConfigReset,
		LockAcquire, LockRelease, LockListTool,
		TaskCreate, TaskListTool, TaskShow, TaskClaim, TaskAssign, TaskUpdateStatus, TaskRelease, TaskAddComment,
		EpicCreate, EpicListTasks, AgentGetTask, AgentGetEpic,
		EpicGetReviewQueue, EpicApprovePR, EpicRequestChanges, EpicReadFile, EpicCreateEpicPR,
		ConflictListTool,
		Spawn, InstanceListTool, Peek, Send, Kill, Abandon, Cleanup, Reap, SetStatus,
		RequestReview, SendFeedback,
		CreatePullRequest, CreateIssues, GitHubRetry, GitHubReviewsTool,
		Archive,
		PromptSearch, PromptDescribe, PromptExecute, PromptReload,
		SessionOpen, CycleStart, CycleStatusTool, CycleComplete, CycleArchive, HandoffWrite, HandoffRead,
		AgentListSessions, AgentQuery, AgentQueryStream, AgentContinue, AgentResume, AgentInterrupt, AgentAbort, AgentSetModel, AgentSetPermissionMode,
	}
}

// BuiltinHooks are the nouns' steps in the call pipeline: an instance's
// first call marks it running (markRunning), a failure its caller cannot
// fix is mailed to whoever must hear of it (escalate), and another seed's
// name for a tool is answered with ours (unknownTool).
func BuiltinHooks() Hooks {
	return Hooks{
		BeforeHandler: []func(c *Call) error{markRunning},
		OnFailure:     []func(ctx context.Context, st *gitstate.Store, c *Call, res Result, commit string) string{escalate},
		UnknownTool:   unknownTool,
		SettleClaims:  restoreInvariants,
	}
}

// nounConfigKeys are the settings the nouns own, registered here as their
// tools are: each noun lists its keys next to the code that reads them.
// (The framework's own, auth.* policy.* timeout.* retry.*, are config.go's.)
func nounConfigKeys() []ConfigKey {
	return slices.Concat(
		mailKeys(), cycleKeys(), instanceKeys(), githubKeys(), taskKeys(), delegateKeys(), mcpKeys(), wakeKeys(), retentionKeys(), githubReviewKeys(),
	)
}

// nounKeyPatterns find the settings whose names the nouns make up (a
// launcher's agent.<name>.command): each answers whether name is one.
func nounKeyPatterns() []func(name string) (ConfigKey, bool) {
	return []func(name string) (ConfigKey, bool){launcherKey}
}

// nounKinds are the nouns' record kinds, in the order docs/STATE.md lists
// them (after the framework's config and agents), each defined by the
// noun that owns it (its Kind: where its records live, how they decode
// and validate, merge, and who holds them).
func nounKinds() []Kind {
	return []Kind{
		mailKind(), decisionKind(), taskKind(), lockKind(),
		activeReviewKind(), ConflictKind(), relationshipKind(), feedbackKind(), sessionKind(),
		githubCallKind(), escalationKind(), delegationKind(),
		epicKind(), commentKind(), wakeKind(), githubReviewKind(),
	}
}
