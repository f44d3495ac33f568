package tmux

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// marked lists the live processes (not zombies) whose environment holds
// mark: the processes of one test's sessions, whoever their parent is now.
func marked(t *testing.T, mark string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no process table: %v", err)
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(mark)) {
			continue
		}
		if st, ok := readStat(pid); !ok || st.zombie {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})))
	}
	return found
}

// waitMarked waits until n processes carry mark.
func waitMarked(t *testing.T, mark string, n int) []string {
	t.Helper()
	var found []string
	for deadline := time.Now().Add(waitTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if found = marked(t, mark); len(found) >= n {
			return found
		}
	}
	t.Fatalf("expected %d processes marked %s, found %d:\n%s", n, mark, len(found), strings.Join(found, "\n"))
	return nil
}

// Kill ends every process a session started, checked in the process
// table: a pane whose program ignores SIGHUP (as Gemini CLI does), its
// child that ignores SIGHUP and SIGTERM, one that left the pane's session
// (setsid), and one whose parent has already exited. tmux's kill-session
// alone leaves all of them running.
func TestKillEndsProcessTree(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not on PATH")
	}
	ctx := testContext(t)
	for _, tc := range []struct {
		name string
		keep bool // KeepDeadPane: the pane's program is respawned
	}{{"plain", false}, {"keepdead", true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			r.KillGrace = 300 * time.Millisecond
			mark := fmt.Sprintf("GCTMUX_MARK=%d-%s", os.Getpid(), tc.name)
			key, val, _ := strings.Cut(mark, "=")
			// the pane's shell ignores HUP; its children: one ignores HUP
			// and TERM, one runs in a session of its own, and a subshell
			// that exits at once leaves its own child (reparented)
			script := `trap '' HUP
sh -c 'trap "" TERM; exec sleep 3001' &
setsid sleep 3002 &
sh -c 'sleep 3003 & exit 0'
exec sleep 3000`
			spec := SessionSpec{Name: "tree", Command: []string{"sh", "-c", script}, Env: map[string]string{key: val}, KeepDeadPane: tc.keep}
			mustNewSession(t, ctx, r, spec)
			before := waitMarked(t, mark, 4)
			t.Logf("before kill:\n%s", strings.Join(before, "\n"))

			start := time.Now()
			if err := r.Kill(ctx, "tree"); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			if left := marked(t, mark); len(left) > 0 {
				t.Fatalf("Kill returned after %v with processes of the session still running:\n%s", time.Since(start), strings.Join(left, "\n"))
			}
			if has, err := r.HasSession(ctx, "tree"); err != nil || has {
				t.Fatalf("session after Kill: has=%v err=%v", has, err)
			}
		})
	}
}

// What the control case shows: kill-session alone (tmux's SIGHUP) leaves
// a program that ignores SIGHUP running. If this ever fails, tmux has
// started to do more than close the terminal, and Kill's own work is a
// belt to its braces.
func TestKillSessionAloneLeavesHUPIgnorers(t *testing.T) {
	ctx := testContext(t)
	r := newRunner(t)
	mark := fmt.Sprintf("GCTMUX_MARK=%d-control", os.Getpid())
	key, val, _ := strings.Cut(mark, "=")
	mustNewSession(t, ctx, r, SessionSpec{Name: "hup", Command: []string{"sh", "-c", "trap '' HUP; exec sleep 3004"}, Env: map[string]string{key: val}})
	waitMarked(t, mark, 1)
	if _, err := r.run(ctx, "kill-session", "hup", true, "kill-session", "-t", sessionTarget("hup")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	left := marked(t, mark)
	if len(left) != 1 {
		t.Fatalf("after kill-session alone: %v", left)
	}
	pid, _ := strconv.Atoi(strings.Fields(left[0])[0])
	endProcs([]proc{{pid: pid}}, time.Second)
	if left := marked(t, mark); len(left) > 0 {
		t.Fatalf("endProcs left %v", left)
	}
}
