package forge_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/review"
)

// at is ref's commit in the git directory gitDir, or "" if it has none.
func at(gitDir, ref string) string {
	out, err := gitstatetest.GitErr(gitDir, "--git-dir", gitDir, "rev-parse", "--verify", "--quiet", ref)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// TestPublishBranchesPushes: the branches a pull request names are pushed
// to origin as they are here; a branch this repository does not have
// (one only on the forge) or none is skipped, and a repository without
// origin pushes nothing.
func TestPublishBranchesPushes(t *testing.T) {
	e := newTestEnv(t)
	ctx := t.Context()
	repo := tools.CodeRepoOf(e.st)
	if err := forge.PublishBranches(ctx, repo, "feature", "", "only-on-the-forge"); err != nil {
		t.Fatal(err)
	}
	if got, want := at(e.origin, "refs/heads/feature"), at(e.dir+"/.git", "refs/heads/feature"); got == "" || got != want {
		t.Fatalf("origin's feature %q, want %q", got, want)
	}
	if at(e.origin, "refs/heads/only-on-the-forge") != "" {
		t.Fatal("a branch this repository lacks was made on origin")
	}
	// again, nothing new: fine
	if err := forge.PublishBranches(ctx, repo, "feature"); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, e.dir, "remote", "remove", "origin")
	commitOn(t, e.dir, "feature", "more.txt", "more\n")
	if err := forge.PublishBranches(ctx, repo, "feature"); err != nil {
		t.Fatalf("no origin: %v", err)
	}
}

// TestPublishBranchesNeverForces: a branch origin holds with commits this
// one lacks is not overwritten: the push is refused (409, not transient,
// saying to merge or rebase), origin keeps its commits, and the call is
// FAILED after one try, with no pull request asked for.
func TestPublishBranchesNeverForces(t *testing.T) {
	e := newTestEnv(t)
	theirs := commitOn(t, e.dir, "theirs", "theirs.txt", "someone else's\n")
	gitstatetest.Git(t, e.dir, "push", "-q", "origin", "theirs:feature")
	err := forge.PublishBranches(t.Context(), tools.CodeRepoOf(e.st), "feature")
	var ge *tools.GitHubError
	if !errors.As(err, &ge) || ge.Status != 409 || ge.Transient() || !strings.Contains(ge.Message, "feature on origin has commits your branch lacks; merge or rebase onto origin/feature") {
		t.Fatalf("got %v", err)
	}
	if got := at(e.origin, "refs/heads/feature"); got != theirs {
		t.Fatalf("origin's feature moved to %s", got)
	}
	r := e.call("github_call", prArgs)
	if r.OK || r.Error.Code != tools.GitHubRefused || r.Error.Details["status"] != 409 {
		t.Fatalf("got %+v", r)
	}
	if g := e.made(r); g.State != forge.GitHubFailed || g.Attempts != 1 || count(e.srv.Requests(), "POST", "/pulls") != 0 || at(e.origin, "refs/heads/feature") != theirs {
		t.Fatalf("record %+v", g)
	}
}

// TestPublishBranchesUnreachableOrigin: an origin that cannot be reached
// is a transient failure (status 0): the call is tried again, then kept
// PENDING as GITHUB_UNAVAILABLE, no pull request asked for.
func TestPublishBranchesUnreachableOrigin(t *testing.T) {
	e := newTestEnv(t)
	gitstatetest.Git(t, e.dir, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	err := forge.PublishBranches(t.Context(), tools.CodeRepoOf(e.st), "feature")
	var ge *tools.GitHubError
	if !errors.As(err, &ge) || ge.Status != 0 || !ge.Transient() || !strings.Contains(ge.Message, "could not push feature to origin") {
		t.Fatalf("got %v", err)
	}
	r := e.call("github_call", prArgs)
	if r.OK || r.Error.Code != tools.GitHubUnavailable || !strings.Contains(r.Error.Message, "could not push feature to origin") {
		t.Fatalf("got %+v", r)
	}
	if g := e.made(r); g.State != forge.GitHubPending || g.Attempts != 3 || count(e.srv.Requests(), "POST", "/pulls") != 0 || len(e.tries(g.ID)) != 2 {
		t.Fatalf("record %+v", g)
	}
}

// TestMakePushesAnEpicBaseNeverADefaultBranch: a pull request into an
// epic's branch pushes the epic's branch too (GitHub needs the base);
// a default branch is never pushed, whatever local commits it has.
func TestMakePushesAnEpicBaseNeverADefaultBranch(t *testing.T) {
	e := newTestEnv(t)
	published := at(e.origin, "refs/heads/main")
	commitOn(t, e.dir, "main", "local.txt", "the person's own\n")
	gitstatetest.Git(t, e.dir, "branch", "epic/e-1", "main")
	commitOn(t, e.dir, "epic/e-1", "epic.txt", "the epic\n")
	gitstatetest.Git(t, e.dir, "branch", "task", "epic/e-1")
	commitOn(t, e.dir, "task", "task.txt", "the task\n")
	g := e.made(e.ok("github_call", `{"op":"create_pull_request","head":"task","base":"epic/e-1","title":"t"}`))
	if g.State != forge.GitHubDone || g.PR.Base != "epic/e-1" {
		t.Fatalf("record %+v", g)
	}
	for _, b := range []string{"task", "epic/e-1"} {
		if got := at(e.origin, "refs/heads/"+b); got == "" || got != at(e.dir+"/.git", "refs/heads/"+b) {
			t.Errorf("origin's %s is %q", b, got)
		}
	}
	if g := e.made(e.ok("github_call", `{"op":"create_pull_request","head":"feature","base":"main","title":"t"}`)); g.State != forge.GitHubDone {
		t.Fatalf("record %+v", g)
	}
	if got := at(e.origin, "refs/heads/main"); got != published {
		t.Fatalf("origin's main moved to %s", got)
	}
}

// TestNothingToPropose: a head whose commits the base has (here, or as
// origin last showed it) has nothing for a pull request; one ahead has,
// and a head or base this repository does not know is left to the forge.
// Such a call is FAILED (INVALID_AGENT_STATE) before anything is pushed.
func TestNothingToPropose(t *testing.T) {
	e := newTestEnv(t)
	ctx := t.Context()
	gitDir := e.dir + "/.git"
	gitstatetest.Git(t, e.dir, "branch", "same", "main")
	for _, tt := range []struct {
		head, base string
		nothing    bool
	}{
		{"same", "main", true},
		{"main", "feature", true},
		{"feature", "main", false},
		{"unknown", "main", false},
		{"same", "unknown", false},
		{"", "main", false},
		{"same", "", false},
	} {
		why := forge.NothingToPropose(ctx, gitDir, tt.head, tt.base)
		if (why != "") != tt.nothing || tt.nothing && !strings.Contains(why, tt.head+" has no commits that "+tt.base+" lacks") {
			t.Errorf("NothingToPropose(%s, %s) = %q", tt.head, tt.base, why)
		}
	}
	// a base known only as origin's
	gitstatetest.Git(t, e.dir, "push", "-q", "origin", "feature:published")
	gitstatetest.Git(t, e.dir, "fetch", "-q", "origin")
	gitstatetest.Git(t, e.dir, "branch", "behind", "feature")
	if why := forge.NothingToPropose(ctx, gitDir, "behind", "published"); why == "" {
		t.Error("a base known as origin/published was not read")
	}

	r := e.call("github_call", `{"op":"create_pull_request","head":"same","base":"main","title":"t"}`)
	if r.OK || r.Error.Code != tools.InvalidAgentState || !strings.Contains(r.Error.Message, "nothing for a pull request") {
		t.Fatalf("got %+v", r)
	}
	if g := e.made(r); g.State != forge.GitHubFailed || at(e.origin, "refs/heads/same") != "" || count(e.srv.Requests(), "POST", "/pulls") != 0 {
		t.Fatalf("record %+v; origin has same: %q", g, at(e.origin, "refs/heads/same"))
	}
}

// TestDefaultBase: origin's HEAD names the forge's default branch as last
// fetched; without it there is none.
func TestDefaultBase(t *testing.T) {
	e := newTestEnv(t)
	gitDir := e.dir + "/.git"
	if got := forge.DefaultBase(t.Context(), gitDir); got != "main" {
		t.Fatalf("DefaultBase = %q", got)
	}
	gitstatetest.Git(t, e.dir, "remote", "set-head", "origin", "--delete")
	if got := forge.DefaultBase(t.Context(), gitDir); got != "" {
		t.Fatalf("DefaultBase without origin/HEAD = %q", got)
	}
}

// TestMakeDropsTheReviewScaffolding: REVIEW_FEEDBACK.md, which the review
// loop commits on a branch, is taken out of it in one commit on top,
// authored by the caller, before the branch is pushed: the pull request
// shows the work. A base that has the file too keeps it: it is the
// project's own.
func TestMakeDropsTheReviewScaffolding(t *testing.T) {
	e := newTestEnv(t)
	reviewed := commitOn(t, e.dir, "feature", review.FeedbackFile, "fix the thing\n")
	g := e.made(e.ok("github_call", prArgs))
	if g.State != forge.GitHubDone {
		t.Fatalf("record %+v", g)
	}
	tip := at(e.origin, "refs/heads/feature")
	if tip == "" || tip == reviewed || tip != at(e.dir+"/.git", "refs/heads/feature") {
		t.Fatalf("origin's feature %s, reviewed %s", tip, reviewed)
	}
	if files := gitstatetest.Git(t, e.dir, "ls-tree", "--name-only", tip); strings.Contains(files, review.FeedbackFile) || !strings.Contains(files, "work.txt") {
		t.Fatalf("the pushed tip holds %q", files)
	}
	if got := gitstatetest.Git(t, e.dir, "log", "-1", "--format=%P|%an <%ae>|%cn|%s", tip); got != reviewed+"|"+human+" <t@example.com>|git codex|Remove "+review.FeedbackFile+" before the pull request" {
		t.Fatalf("the commit: %s", got)
	}

	// the project's own file
	commitOn(t, e.dir, "main", review.FeedbackFile, "the project's\n")
	gitstatetest.Git(t, e.dir, "branch", "own", "main")
	own := commitOn(t, e.dir, "own", "own.txt", "more\n")
	if g := e.made(e.ok("github_call", `{"op":"create_pull_request","head":"own","base":"main","title":"t"}`)); g.State != forge.GitHubDone || at(e.origin, "refs/heads/own") != own {
		t.Fatalf("record %+v; origin's own %s, want %s", g, at(e.origin, "refs/heads/own"), own)
	}
}

// TestDropScaffoldingInAWorktree: in a worktree that has the branch
// checked out, the file's index entry and working copy go with it, unless
// the working copy holds changes of its own; nothing else is touched.
func TestDropScaffoldingInAWorktree(t *testing.T) {
	for _, edited := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited %t", edited), func(t *testing.T) {
			e := newTestEnv(t)
			commitOn(t, e.dir, "feature", review.FeedbackFile, "fix the thing\n")
			wt := filepath.Join(t.TempDir(), "wt")
			gitstatetest.Git(t, e.dir, "worktree", "add", "-q", wt, "feature")
			path := filepath.Join(wt, review.FeedbackFile)
			if edited {
				os.WriteFile(path, []byte("my own notes\n"), 0o644)
			}
			os.WriteFile(filepath.Join(wt, "scratch.txt"), []byte("untracked\n"), 0o644)
			commit, err := forge.DropScaffolding(t.Context(), tools.CodeRepoOf(e.st), "feature", "main", human)
			if err != nil || commit == "" || at(e.dir+"/.git", "refs/heads/feature") != commit {
				t.Fatalf("DropScaffolding = %q, %v", commit, err)
			}
			_, statErr := os.Stat(path)
			if edited == os.IsNotExist(statErr) {
				t.Fatalf("edited %t: the working copy's %s: %v", edited, review.FeedbackFile, statErr)
			}
			status := gitstatetest.Git(t, wt, "status", "--porcelain")
			want := "?? scratch.txt"
			if edited {
				want = "?? " + review.FeedbackFile + "\n" + want
			}
			if status != want {
				t.Fatalf("worktree status %q, want %q", status, want)
			}
			again, err := forge.DropScaffolding(t.Context(), tools.CodeRepoOf(e.st), "feature", "main", human)
			if err != nil || again != "" {
				t.Fatalf("a second time: %q, %v", again, err)
			}
		})
	}
}
