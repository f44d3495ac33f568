package app

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSyncProfile runs `git codex sync` in this process on a repository
// given by GIT_CODEX_PROFILE_SYNC (a directory), so that `go test
// -cpuprofile` profiles the sync's own Go code beside the git processes it
// starts (GIT_TRACE2_PERF times those): issue 27's day-behind sync, on a
// copy of a state the simulation kept (GIT_CODEX_SIM_KEEP). Arguments
// after "sync" come from GIT_CODEX_PROFILE_SYNC_ARGS ("-q origin" unless
// set). Skipped without the variable: it changes the repository it is
// given.
func TestSyncProfile(t *testing.T) {
	dir := os.Getenv("GIT_CODEX_PROFILE_SYNC")
	if dir == "" {
		t.Skip("GIT_CODEX_PROFILE_SYNC names no repository to sync")
	}
	args := strings.Fields(os.Getenv("GIT_CODEX_PROFILE_SYNC_ARGS"))
	if len(args) == 0 {
		args = []string{"-q", "origin"}
	}
	t.Setenv("CODEX_INSTANCE", "")
	start := time.Now()
	stdout, stderr, code := run(t, dir, append([]string{"sync"}, args...)...)
	t.Logf("sync %s: %s, exit %d\n%s%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), code, stdout, stderr)
	if code != 0 {
		t.Fatalf("sync failed: %d", code)
	}
}
