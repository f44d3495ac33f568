package instance

import "github.com/gitcodex/git-codex/tools"

// handover is what a spawned instance's first prompt says about git
// codex's tools and how its work is handed over, by agent type: only
// tools its type may call by the default policy (TestPromptsNameOnlyPermittedTools).
// A worker (task.spawn_worker's) was once told to ask for a review with
// request_review, which workers may not call: a worker's work is reviewed
// by its supervisor, through the pull request that puts its task in REVIEW.
func handover(t tools.AgentType) string {
	const common = "git codex is your MCP server (git-codex): use its tools to mail other agents and people (mail_send), " +
		"log decisions (log_decision) and see your status (agent_get_status). "
	switch t {
	case tools.TypeCoding:
		return common + "Commit your work on your branch as you go. When it is ready, ask for a review with request_review and a completion_message; " +
			"a reviewer's feedback arrives as a commit adding REVIEW_FEEDBACK.md to your branch. Once your work is approved (or at the review limit), " +
			"open a pull request with create_pull_request."
	case tools.TypeWorker:
		return common + "You hold a task: see it, its comments and your supervisor's feedback with agent_get_task. Commit your work on your branch as you go. " +
			"When it is done and tested, open a pull request with create_pull_request: your task goes to REVIEW, and your supervisor reviews it " +
			"(requested changes come back as comments on the task)."
	case tools.TypeReview:
		return common + "Review the work on your branch, then call send_feedback once with your verdict."
	case tools.TypePlanning:
		return common + "Commit your plans on your branch as you go; file the work they call for as issues with create_issues, " +
			"or as tasks with task_create."
	}
	return common + "Commit your work on your branch as you go."
}
