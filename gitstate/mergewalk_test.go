package gitstate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
)

// A validated merge walks the commits theirs brings once: the one `git
// rev-list --left-right` that counts both sides also lists the incoming
// commits the checks read (a day-behind sync brings ~4,600; a second walk
// of them was a second git process). The commit validator still sees
// exactly those commits, for a fast-forward and for a merge.
func TestMergeValidatedWalksIncomingOnce(t *testing.T) {
	ctx := context.Background()
	for _, diverged := range []bool{false, true} {
		name := map[bool]string{false: "fast-forward", true: "merge"}[diverged]
		t.Run(name, func(t *testing.T) {
			s, dir := openInit(t)
			base := putRaw(t, s, "a.json", "1")
			th1 := putRaw(t, s, "b.json", "2")
			th2 := putRaw(t, s, "c.json", "3")
			resetState(t, dir, base.Hash)
			if diverged {
				putRaw(t, s, "d.json", "4")
			}
			trace := filepath.Join(t.TempDir(), "trace")
			t.Setenv("GIT_TRACE", trace)
			var seen []string
			check := gitstate.Check{Commit: func(c gitstate.IncomingCommit) error {
				seen = append(seen, c.Hash)
				return nil
			}}
			res, err := s.MergeValidated(ctx, th2.Hash, (&testResolver{}).resolve, check, finishMeta)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT_TRACE", "")
			want := map[bool]gitstate.MergeStatus{false: gitstate.MergeFastForward, true: gitstate.MergeMerged}[diverged]
			if res.Status != want {
				t.Fatalf("Merge = %+v, want %s", res, want)
			}
			sort.Strings(seen)
			incoming := []string{th1.Hash, th2.Hash}
			sort.Strings(incoming)
			if strings.Join(seen, " ") != strings.Join(incoming, " ") {
				t.Errorf("the commit check saw %v, want theirs' commits %v", seen, incoming)
			}
			data, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			var walks []string
			for _, line := range strings.Split(string(data), "\n") {
				if strings.Contains(line, "built-in: git rev-list") {
					walks = append(walks, line[strings.Index(line, "git rev-list"):])
				}
			}
			if len(walks) != 1 {
				t.Errorf("the merge ran %d rev-list walks, want 1:\n%s", len(walks), strings.Join(walks, "\n"))
			}
		})
	}
}

// A merge bringing many commits reads them on a reader of its own, beside
// its checks of the trees (checkCommitsAside): every incoming commit is
// still checked, one that fails still refuses the merge (naming it, the
// state unchanged), and one that passes lets it through. Run with -race,
// the commit check is called from its own goroutine.
func TestMergeValidatedChecksManyCommitsAside(t *testing.T) {
	ctx := context.Background()
	for _, diverged := range []bool{false, true} {
		name := map[bool]string{false: "fast-forward", true: "merge"}[diverged]
		t.Run(name, func(t *testing.T) {
			s, dir := openInit(t)
			base := putRaw(t, s, "a.json", "1")
			var theirs []string
			for i := 0; i < 300; i++ { // more than asideCommits
				theirs = append(theirs, putRaw(t, s, fmt.Sprintf("r%d.json", i%7), fmt.Sprint(i)).Hash)
			}
			bad := theirs[150]
			resetState(t, dir, base.Hash)
			if diverged {
				putRaw(t, s, "d.json", "4")
			}
			before := tip(t, dir)
			var mu sync.Mutex
			seen := map[string]bool{}
			check := func(refuse string) gitstate.Check {
				return gitstate.Check{Commit: func(c gitstate.IncomingCommit) error {
					mu.Lock()
					defer mu.Unlock()
					seen[c.Hash] = true
					if c.Hash == refuse {
						return fmt.Errorf("refused by the test")
					}
					return nil
				}}
			}
			_, err := s.MergeValidated(ctx, theirs[len(theirs)-1], (&testResolver{}).resolve, check(bad), finishMeta)
			if !errors.Is(err, gitstate.ErrInvalidState) || !strings.Contains(err.Error(), bad) {
				t.Fatalf("MergeValidated with commit %s refused: %v, want ErrInvalidState naming it", bad, err)
			}
			if got := tip(t, dir); got != before {
				t.Fatalf("a refused merge moved the state from %s to %s", before, got)
			}
			if len(seen) != len(theirs) {
				t.Errorf("the commit check saw %d commits, want %d", len(seen), len(theirs))
			}
			clear(seen)
			res, err := s.MergeValidated(ctx, theirs[len(theirs)-1], (&testResolver{}).resolve, check(""), finishMeta)
			if err != nil {
				t.Fatal(err)
			}
			want := map[bool]gitstate.MergeStatus{false: gitstate.MergeFastForward, true: gitstate.MergeMerged}[diverged]
			if res.Status != want || len(seen) != len(theirs) {
				t.Errorf("Merge = %+v having checked %d commits, want %s having checked %d", res, len(seen), want, len(theirs))
			}
		})
	}
}
