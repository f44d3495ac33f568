// Package forge makes git codex's calls to GitHub: the record of a call
// (GitHubCall, github/<x>/<y>/<id>.json) and its kind, the github.*
// settings, the runner that makes a call after its intent is committed
// (retries, a replay that asks GitHub first, every try in the audit
// trail), and the push of a pull request's branches. It is named forge,
// not github, because the top-level package github is the REST client
// (what tools.GitHub is made of); the two would clash in every file that
// uses both.
//
// The tools that ask for calls (create_pull_request, create_issues,
// github retry) read tasks and epics, so they stay in work, above this
// package; a pull request's outcome on its task reaches work through the
// TaskOutcome work hands NewRun.
package forge
