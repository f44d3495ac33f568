package gitstate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestPackFsyncedBeforeTheRefMoves watches a writer process's system calls
// (strace): the transaction's pack and index are each fsynced before they
// are renamed into objects/pack, and both before the rename that moves
// refs/codex/state, as git's core.fsync asks for its own packs by default;
// with core.fsync=none they are not fsynced. The ref's new value is
// fsynced before its rename when core.fsync names "reference" (git's
// default does not, for git's own refs either).
func TestPackFsyncedBeforeTheRefMoves(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	for _, tc := range []struct {
		fsync       string
		wantSync    bool
		wantRefSync bool
	}{{"", true, false}, {"none", false, false}, {"-pack,-pack-metadata", false, false}, {"pack", true, false}, {"committed,pack-metadata", true, true}, {"none,reference", false, true}} {
		t.Run("core.fsync="+tc.fsync, func(t *testing.T) {
			dir := newStateRepo(t)
			if tc.fsync != "" {
				gitstatetest.Git(t, dir, "config", "core.fsync", tc.fsync)
			}
			trace := filepath.Join(t.TempDir(), "trace")
			cmd := exec.Command("strace", "-f", "-y", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat", os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envWriter+"=1", envRepo+"="+dir, envName+"=s", envCount+"=1", envPackEvery+"=-1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("writer under strace: %v\n%s", err, out)
			}
			b, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			at := func(re string) int {
				r := regexp.MustCompile(re)
				for i, l := range lines {
					if r.MatchString(l) {
						return i
					}
				}
				return -1
			}
			ref := at(`rename.*refs/codex/state\.lock", .*refs/codex/state"`)
			if ref < 0 {
				t.Fatalf("no rename of refs/codex/state.lock in the trace:\n%s", b)
			}
			// done returns the line where the call begun at line i returned:
			// i itself, or its "resumed" line when strace split it (the
			// pack's and the index's fsyncs run at once, in two threads)
			done := func(i int) int {
				if i < 0 || !strings.Contains(lines[i], "<unfinished ...>") {
					return i
				}
				pid, _, _ := strings.Cut(lines[i], " ")
				for j := i + 1; j < len(lines); j++ {
					if strings.HasPrefix(lines[j], pid+" ") && regexp.MustCompile(`<\.\.\. f(data)?sync resumed>`).MatchString(lines[j]) {
						return j
					}
				}
				return len(lines) // never returned
			}
			refSynced := done(at(`f(data)?sync\(\d+<[^>]*codex/swap\.tmp>`))
			if tc.wantRefSync != (refSynced >= 0 && refSynced < ref) {
				t.Errorf("core.fsync=%q: the ref's new value fsynced before the ref moved: %v, want %v", tc.fsync, refSynced >= 0 && refSynced < ref, tc.wantRefSync)
			}
			for _, kind := range []string{"pack", "idx"} {
				renamed := at(`rename.*tmp_` + kind + `_[0-9a-f]+", .*/objects/pack/pack-[0-9a-f]{40}\.` + kind + `"`)
				synced := done(at(`f(data)?sync\(\d+<[^>]*tmp_` + kind + `_[0-9a-f]+>`))
				if renamed < 0 || renamed > ref {
					t.Fatalf("the %s was not renamed into place before the ref moved (lines %d, %d):\n%s", kind, renamed, ref, b)
				}
				if !tc.wantSync {
					if synced >= 0 {
						t.Errorf("the %s was fsynced although core.fsync=%s", kind, tc.fsync)
					}
					continue
				}
				if synced < 0 || synced > renamed {
					t.Errorf("the %s was not fsynced before its rename (fsync at line %d, rename at %d):\n%s", kind, synced, renamed, b)
				}
			}
		})
	}
}
