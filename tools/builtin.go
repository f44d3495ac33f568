package tools

import (
	"context"

	"github.com/gitcodex/git-codex/gitstate"
)

// Builtin returns a registry of every tool git codex ships, with the
// pipeline's hooks (BuiltinHooks).
func Builtin() *Registry {
	r := NewRegistry(
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
	)
	r.SetHooks(BuiltinHooks())
	return r
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
	}
}

// nounConfigKeys are the settings the nouns own, registered here as their
// tools are: each noun lists its keys next to the code that reads them.
// (The framework's own, auth.* policy.* timeout.* retry.*, are config.go's.)
func nounConfigKeys() []func() []configKey {
	return []func() []configKey{
		mailKeys, cycleKeys, instanceKeys, githubKeys, taskKeys, delegateKeys, mcpKeys, wakeKeys, retentionKeys, githubReviewKeys,
	}
}

// nounKeyPatterns find the settings whose names the nouns make up (a
// launcher's agent.<name>.command): each answers whether name is one.
func nounKeyPatterns() []func(name string) (configKey, bool) {
	return []func(name string) (configKey, bool){launcherKey}
}

// Kinds returns every record kind, in the order docs/STATE.md lists them:
// the framework's (config, agents) and the nouns', each defined by the
// noun that owns it (its Kind: where its records live, how they decode
// and validate, merge, and who holds them). A fresh table on every call:
// a few small values, cheaper than a shared one that someone could
// change.
func Kinds() []Kind {
	return []Kind{
		configKind(), agentKind(), mailKind(), decisionKind(), taskKind(), lockKind(),
		activeReviewKind(), conflictKind(), relationshipKind(), feedbackKind(), sessionKind(),
		githubCallKind(), escalationKind(), delegationKind(),
		epicKind(), commentKind(), wakeKind(), githubReviewKind(),
	}
}
