package work

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// TestLiveInstances reads instances with their sessions' live state from a
// snapshot, without a tool call: no commit is written.
func TestLiveInstances(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not on PATH")
	}
	sock, err := os.MkdirTemp("", "cxl")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMUX_TMPDIR", sock)
	t.Cleanup(func() {
		exec.Command("tmux", "kill-server").Run()
		os.RemoveAll(sock)
	})
	if out, err := exec.Command("tmux", "new-session", "-d", "-s", instance.SessionName("a"), "sleep 60").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(context.Background(), st, tools.Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	_, err = st.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{Summary: "agents"})
		now := tx.Now()
		for _, a := range []tools.Agent{
			{ID: "a", Type: tools.TypeCoding, Status: tools.StatusActive, TmuxSession: instance.SessionName("a")},
			{ID: "b", Type: tools.TypeCoding, Status: tools.StatusActive, TmuxSession: instance.SessionName("b")},
			{ID: "c", Type: tools.TypeCoding, Status: tools.StatusTerminated, TmuxSession: instance.SessionName("c"), CleanedAt: &now},
			{ID: "d", Type: tools.TypeWorker},
			// another machine's: elsewhere, though a session of its
			// name runs here; this machine's without a session: missing
			{ID: "e", Type: tools.TypeCoding, Status: tools.StatusActive, TmuxSession: instance.SessionName("a"), Machine: "m2", Host: "far"},
			{ID: "f", Type: tools.TypeCoding, Status: tools.StatusActive, TmuxSession: instance.SessionName("f"), Machine: "m1"},
		} {
			a.State, a.CreatedAt, a.UpdatedAt, a.Clock = tools.StateIdle, now, now, tx.Clock()
			if err := tx.Put(tools.AgentPath(a.ID), a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
	var views []instance.View
	err = st.View(context.Background(), func(sn *gitstate.Snapshot) error {
		views, err = instance.LiveInstances(context.Background(), sn, Builtin().ConfigKeys(), tools.Env{}, "m1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": instance.LiveRunning, "b": instance.LiveMissing, "c": instance.LiveNone, "d": "", "e": instance.LiveElsewhere, "f": instance.LiveMissing}
	if len(views) != len(want) {
		t.Fatalf("views: %+v", views)
	}
	for i, v := range views {
		if v.Live != want[v.ID] || (i > 0 && views[i-1].ID > v.ID) {
			t.Errorf("%s: live %q, want %q (order %d)", v.ID, v.Live, want[v.ID], i)
		}
	}
	if after := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); after != before {
		t.Errorf("reading live instances moved the ref: %s -> %s", before, after)
	}
}
