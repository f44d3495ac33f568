package gitstate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestSyncNegotiatesFromTheState: a sync after the first tells the remote
// what it has from the state's history (the local state, its
// remote-tracking ref, the notes), not from the clone's own newer refs
// the remote never has (a reads chain: git offered it first, newest
// first, in vain; a notes ref that is not git codex's), and still fetches
// only what is new.
func TestSyncNegotiatesFromTheState(t *testing.T) {
	ctx := context.Background()
	s, dir := openInit(t)
	base := putRaw(t, s, "a.json", "1")
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitstatetest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	gitstatetest.Git(t, dir, "remote", "add", "origin", origin)
	opts := gitstate.SyncOptions{Resolve: clockResolver, Finish: finishMeta, Push: true}
	if _, err := s.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	// the remote moves on: another clone's writes
	dir2 := gitstatetest.NewRepo(t)
	gitstatetest.Git(t, dir2, "remote", "add", "origin", origin)
	s2, err := gitstate.Open(dir2, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	theirs := putRaw(t, s2, "b.json", "2")
	if _, err := s2.Sync(ctx, "origin", opts); err != nil {
		t.Fatal(err)
	}
	// the clone's own chain, newer than anything else here, never pushed
	empty := gitstatetest.WriteTree(t, dir, nil)
	reads := map[string]bool{}
	parent := ""
	for i := 0; i < 40; i++ {
		args := []string{"commit-tree", empty, "-m", "read"}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2099-01-01T00:00:00Z", "GIT_AUTHOR_DATE=2099-01-01T00:00:00Z")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		parent = strings.TrimSpace(string(out))
		reads[parent] = true
	}
	gitstatetest.Git(t, dir, "update-ref", "refs/codex/reads/mine", parent)
	// and a notes ref below refs/notes/codex/, which is not git codex's
	// (refs/notes/codex*, as git for-each-ref matches it, stops at a slash)
	gitstatetest.Git(t, dir, "update-ref", "refs/notes/codex/mine", parent)

	trace := filepath.Join(t.TempDir(), "packets")
	t.Setenv("GIT_TRACE_PACKET", trace)
	res, err := s.Sync(ctx, "origin", opts)
	t.Setenv("GIT_TRACE_PACKET", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Merge.Status != gitstate.MergeFastForward || res.Merge.Commit != theirs.Hash {
		t.Fatalf("merge %s to %s, want a fast-forward to %s", res.Merge.Status, res.Merge.Commit, theirs.Hash)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var haves, offered []string
	for _, line := range strings.Split(string(data), "\n") {
		i := strings.Index(line, "fetch> have ")
		if i < 0 {
			continue
		}
		id := strings.TrimSpace(line[i+len("fetch> have "):])
		haves = append(haves, id)
		if reads[id] {
			offered = append(offered, id)
		}
	}
	if len(offered) > 0 {
		t.Errorf("the fetch offered %d commits of the clone's own reads chain as haves (of %d haves)", len(offered), len(haves))
	}
	if !strings.Contains(strings.Join(haves, " "), base.Hash) {
		t.Errorf("the fetch did not offer the state's tip %s: haves %v", base.Hash, haves)
	}
}
