package gitrepo_test

import (
	"path/filepath"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// TestStorage runs the storage suite (storagesuite_test.go) against the
// object database and refs the store uses.
func TestStorage(t *testing.T) {
	runStorageSuite(t, func(t *testing.T, common string) gitrepo.Storage {
		r := gitrepo.Open(common, filepath.Join(common, "codex", "tmp"))
		t.Cleanup(r.Close)
		return r
	})
}
