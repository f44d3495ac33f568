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
		CreatePullRequest, CreateIssues, GitHubRetry,
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
