package tools

import (
	"context"
	"encoding/json"

	"github.com/gitcodex/git-codex/gitstate"
)

// Builtin returns a registry of every tool git codex ships.
func Builtin() *Registry {
	return NewRegistry(
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
		PromptSearch, PromptDescribe, PromptExecute, PromptReload,
		SessionOpen, CycleStart, CycleStatusTool, CycleComplete, CycleArchive, HandoffWrite, HandoffRead,
		AgentListSessions, AgentQuery, AgentQueryStream, AgentContinue, AgentResume, AgentInterrupt, AgentAbort, AgentSetModel, AgentSetPermissionMode,
	)
}

// Init creates the state: the first commit on refs/codex/state, holding an
// empty config (defaults apply until someone sets a key). It fails with
// gitstate.ErrAlreadyInitialized when the state exists.
func Init(ctx context.Context, st *gitstate.Store, callerID string) (gitstate.Commit, error) {
	c, _, err := update(ctx, st, true, func(tx *gitstate.Tx) error {
		a := audit{tool: "init", actor: callerID, args: "{}"}
		if IsHuman(callerID) {
			a.actorType = TypeHuman
		}
		c := &Call{Caller: Caller{ID: callerID, Type: a.actorType}, Tx: tx}
		c.Summarize("%s initialised git codex", callerID)
		tx.SetMeta(a.meta(c, nil))
		return tx.Put(pathConfig, Config{Entries: map[string]ConfigEntry{}})
	})
	return c, err
}

// Restore makes the state of an earlier commit current again, for a
// repository whose refs/codex/state was deleted or whose tip no longer
// reads whole (gitstate.Store.Restore). It is recorded like a call, as the
// tool "restore".
func Restore(ctx context.Context, st *gitstate.Store, callerID, rev string) (gitstate.Commit, error) {
	args, _ := json.Marshal(map[string]string{"commit": rev})
	a := audit{tool: "restore", actor: callerID, args: redactArgs(args)}
	if IsHuman(callerID) {
		a.actorType = TypeHuman
	}
	c := &Call{Caller: Caller{ID: callerID, Type: a.actorType}}
	c.Summarize("%s restored the state of %s", callerID, rev)
	c.Target(rev)
	m, _ := sealMeta(a.meta(c, nil))
	return st.Restore(ctx, rev, m)
}
