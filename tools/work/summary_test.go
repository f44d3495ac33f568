package work

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
)

// TestSummaryHeadsAreTheTasks: status's summary made of the task heads it
// keeps (Summary, whole false) lists the active tasks in the order and
// with the id, title, state, holder and creation time of the whole
// records (whole true, what status --json prints), and counts the same,
// from a fresh store with the parts the last one kept and after changes.
func TestSummaryHeadsAreTheTasks(t *testing.T) {
	ctx := context.Background()
	dir := gitstatetest.NewRepo(t)
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := tools.NewRegistry(tools.Catalog{}).Init(ctx, st, tools.Origin{ID: "human:t@example.com"}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	states := []string{TaskPending, TaskInProgress, TaskReview, TaskCompleted, TaskCancelled, TaskInProgress}
	shift := 0
	put := func(from, n int) {
		t.Helper()
		if _, err := st.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(gitstate.Meta{Summary: "tasks"})
			for i := from; i < from+n; i++ {
				id := fmt.Sprintf("t-%016d", i*7919%100003)
				task := Task{ID: id, Title: fmt.Sprintf("task %d", i), Description: "d", State: states[(i+shift)%len(states)],
					CreatedBy: "boss", CreatedAt: at.Add(time.Duration(i/3) * time.Minute), UpdatedAt: at, Clock: gitstate.Clock(i)}
				if task.State != TaskPending && i%4 != 0 {
					task.Claim = &tools.Claim{Holder: fmt.Sprintf("w%d", i%5), Clock: 3, At: at}
				}
				if err := tx.Put(taskPath(id), task); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		t.Helper()
		other, err := gitstate.Open(dir, gitstate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		var heads, whole StatusSummary
		err = other.View(ctx, func(sn *gitstate.Snapshot) error {
			var err error
			if heads, err = Summary(sn, "human:t@example.com", false); err != nil {
				return err
			}
			whole, err = Summary(sn, "human:t@example.com", true)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(heads.Tasks, whole.Tasks) || len(heads.Active) != len(whole.Active) || len(whole.Active) == 0 {
			t.Fatalf("heads count %v and list %d tasks; whole records %v and %d", heads.Tasks, len(heads.Active), whole.Tasks, len(whole.Active))
		}
		for i, h := range heads.Active {
			w := whole.Active[i]
			if w.Description != "d" || w.Clock == 0 {
				t.Fatalf("whole task %d is not the record: %+v", i, w)
			}
			holder := func(t Task) string {
				if t.Claim == nil {
					return "(none)"
				}
				return t.Claim.Holder
			}
			if h.ID != w.ID || h.Title != w.Title || h.State != w.State || !h.CreatedAt.Equal(w.CreatedAt) || holder(h) != holder(w) {
				t.Fatalf("active task %d: head %+v, record %+v", i, h, w)
			}
		}
	}
	put(0, 120)
	check()
	check() // the parts kept by the first
	put(120, 9)
	check()
	shift = 1 // tasks change state
	put(3, 4)
	check()
}
