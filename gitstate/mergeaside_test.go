package gitstate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
)

// A merge bringing many commits checks the incoming tree's shape and
// records (checkTreesAside) and the commits (checkCommitsAside) each on a
// reader of its own, beside dropsKept on the store's: the verdict is the
// one the checks gave one after the other, whichever finishes first — the
// tree's shape before the commits, the commits before the records — and
// a fast-forward that would drop kept records still becomes a merge whose
// merged tree is validated. The same cases with a few commits (checked in
// turn, on the store's reader) give the same verdicts. Run with -race: the
// validators are called from the checks' goroutines.
func TestMergeValidatedAsideVerdictsInOrder(t *testing.T) {
	ctx := context.Background()
	layout := &gitstate.Layout{Dirs: []gitstate.DirLayout{{Dir: "tasks", Depth: 1, Keep: true}}}
	type refuse struct{ shape, commit, record bool }
	cases := []struct {
		name   string
		refuse refuse
		drop   bool   // theirs deletes a kept record: a merge
		want   string // what the error names ("" none)
		not    []string
	}{
		{"shape and commit and record", refuse{shape: true, commit: true, record: true}, false, `"tasks/x": a directory where the layout has`, []string{"refused by the test", "bad record"}},
		{"commit and record", refuse{commit: true, record: true}, false, "refused by the test", []string{"bad record"}},
		{"record", refuse{record: true}, false, "bad record", nil},
		{"none", refuse{}, false, "", nil},
		{"dropped kept record and record", refuse{record: true}, true, "bad record", nil},
		{"dropped kept record", refuse{}, true, "", nil},
	}
	for _, n := range []int{5, 300} { // below and above asideCommits
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%d/%s", n, tc.name), func(t *testing.T) {
				s, dir := openInit(t)
				base := putRaw(t, s, "tasks/t1.json", "kept")
				var theirs []string
				for i := 0; i < n; i++ {
					theirs = append(theirs, putRaw(t, s, fmt.Sprintf("r%d.json", i%7), fmt.Sprint(i)).Hash)
				}
				last := []string{"tasks/t2.json", "new"}
				if tc.refuse.shape {
					last = append(last, "tasks/x/deep.json", "too deep")
				}
				if tc.refuse.record {
					last = append(last, "bad.json", "bad")
				}
				if tc.drop {
					last = append(last, "tasks/t1.json", "")
				}
				theirs = append(theirs, putRaw(t, s, last...).Hash)
				badCommit := theirs[n/2]
				resetState(t, dir, base.Hash)
				before := tip(t, dir)
				var mu sync.Mutex
				check := gitstate.Check{
					Layout: layout,
					Validate: func(path string, data []byte) error {
						if string(data) == "bad" {
							return errors.New("bad record")
						}
						return nil
					},
					Commit: func(c gitstate.IncomingCommit) error {
						mu.Lock()
						defer mu.Unlock()
						if tc.refuse.commit && c.Hash == badCommit {
							return errors.New("refused by the test")
						}
						return nil
					},
				}
				res, err := s.MergeValidated(ctx, theirs[len(theirs)-1], (&testResolver{}).resolve, check, finishMeta)
				if tc.want == "" {
					if err != nil {
						t.Fatal(err)
					}
					want := map[bool]gitstate.MergeStatus{false: gitstate.MergeFastForward, true: gitstate.MergeMerged}[tc.drop]
					if res.Status != want {
						t.Fatalf("Merge = %+v, want %s", res, want)
					}
					if tc.drop && !strings.Contains(strings.Join(res.Report.Kept, " "), "tasks/t1.json") {
						t.Errorf("the merge kept %v, want tasks/t1.json", res.Report.Kept)
					}
					return
				}
				if !errors.Is(err, gitstate.ErrInvalidState) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("MergeValidated: %v, want ErrInvalidState naming %q", err, tc.want)
				}
				for _, not := range tc.not {
					if strings.Contains(err.Error(), not) {
						t.Errorf("MergeValidated: %v: names %q, a later check's verdict", err, not)
					}
				}
				if got := tip(t, dir); got != before {
					t.Fatalf("a refused merge moved the state from %s to %s", before, got)
				}
			})
		}
	}
}
