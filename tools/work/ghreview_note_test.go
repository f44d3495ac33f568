package work

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/review"
)

// TestGitHubReviewNoteOnce: deliverers of one review that note it at the
// same moment (the next watcher and what a SIGKILLed one left running,
// testscripts github_reviews) leave its feedback on the reviewed commit
// once. A check of the note followed by a `git notes append` let both
// append (the flake at github_reviews.txtar:109).
func TestGitHubReviewNoteOnce(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &ReviewFetcher{Store: st}
	for round := range 8 {
		gitstatetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "reviewed")
		reviewed := strings.TrimSpace(gitstatetest.Git(t, dir, "rev-parse", "HEAD"))
		if round%2 == 1 { // a note of another feedback is there already
			gitstatetest.Git(t, dir, "notes", "--ref", repo.RefReviewNotes, "add", "-m", "- feedback id: f-other", reviewed)
		}
		fb := review.Feedback{ID: "f-round" + string(rune('a'+round)), Type: "needs_work", Text: "Rework it.", ReviewedCommit: reviewed}
		rec := GitHubReview{User: "alice", State: tools.ReviewChangesRequested, PR: 1}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = r.noteOnce(ctx, fb, rec)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: deliverer %d: %v", round, i, err)
			}
		}
		note := gitstatetest.Git(t, dir, "notes", "--ref", repo.RefReviewNotes, "show", reviewed)
		if n := strings.Count(note, "- feedback id: "+fb.ID+"\n"); n != 1 {
			t.Fatalf("round %d: the note holds feedback %s %d times:\n%s", round, fb.ID, n, note)
		}
		if round%2 == 1 && !strings.HasPrefix(note, "- feedback id: f-other\n\n# Review feedback: needs_work\n") {
			t.Fatalf("round %d: the note lost what it held or is not appended as git notes append does:\n%s", round, note)
		}
	}
}
