package gitstate_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
