package repo_test

import (
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
)

// openRepo opens the store of the repository containing dir, as git codex
// does, and returns its porcelain.
func openRepo(t *testing.T, dir string) *repo.Repo {
	t.Helper()
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return repo.Of(st)
}
