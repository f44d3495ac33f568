package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
	"github.com/gitcodex/git-codex/tools/work"
)

// renderOut renders data as a tool command without --json would, on a
// terminal (tty) or piped, and returns stdout and stderr.
func renderOut(t *testing.T, tty bool, tool string, data any) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdout: &out, stderr: &errOut, tty: tty, width: 100}
	if err := e.render(tool, data); err != nil {
		t.Fatalf("render %s: %v", tool, err)
	}
	return out.String(), errOut.String()
}

func checkLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	if w := strings.Join(want, "\n") + "\n"; got != w {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, got, w)
	}
}

var (
	at0 = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	at1 = time.Date(2024, 3, 1, 10, 30, 0, 0, time.UTC)
	at2 = time.Date(2024, 3, 2, 8, 15, 0, 0, time.UTC)
)

func TestRenderTask(t *testing.T) {
	held := work.Task{
		ID: "t-0123456789abcdef", Title: "Add auth", Description: "login and logout\n", State: work.TaskInProgress,
		Claim:     &tools.Claim{Holder: "w1", Clock: 3, At: at1},
		CreatedBy: "boss", CreatedAt: at0, UpdatedBy: "w1", UpdatedAt: at1, Clock: 3,
	}
	for _, tty := range []bool{false, true} { // one record reads the same either way
		out, errOut := renderOut(t, tty, "task_show", held)
		checkLines(t, "held task", out,
			"id:          t-0123456789abcdef",
			"title:       Add auth",
			"state:       IN_PROGRESS",
			"holder:      w1 since 2024-03-01T10:30:00Z",
			"created:     2024-03-01T09:00:00Z by boss",
			"updated:     2024-03-01T10:30:00Z by w1",
			"",
			"login and logout")
		if errOut != "" {
			t.Errorf("stderr: %q", errOut)
		}
	}

	open := work.Task{
		ID: "t-fedcba9876543210", Title: "Write docs", State: work.TaskPending,
		CreatedBy: "boss", CreatedAt: at0, UpdatedBy: "boss", UpdatedAt: at0,
	}
	out, _ := renderOut(t, false, "task_create", open)
	checkLines(t, "open task", out,
		"id:          t-fedcba9876543210",
		"title:       Write docs",
		"state:       PENDING",
		"holder:      nobody",
		"created:     2024-03-01T09:00:00Z by boss")
}

func TestRenderTaskList(t *testing.T) {
	list := work.TaskList{Count: 2, Tasks: []work.Task{
		{ID: "t-0123456789abcdef", Title: "Add auth", State: work.TaskInProgress, Claim: &tools.Claim{Holder: "w1", At: at1}},
		{ID: "t-fedcba9876543210", Title: "Write\ndocs", State: work.TaskPending},
	}}
	out, _ := renderOut(t, true, "task_list", list)
	checkLines(t, "task list on a terminal", out,
		"ID                  STATE        HOLDER  TITLE",
		"t-0123456789abcdef  IN_PROGRESS  w1      Add auth",
		"t-fedcba9876543210  PENDING      -       Write docs")
	out, _ = renderOut(t, false, "task_list", list)
	checkLines(t, "task list piped", out,
		"t-0123456789abcdef\tIN_PROGRESS\tw1\tAdd auth",
		"t-fedcba9876543210\tPENDING\t-\tWrite docs")

	out, errOut := renderOut(t, true, "task_list", work.TaskList{Tasks: []work.Task{}})
	if out != "" || errOut != "no tasks\n" {
		t.Errorf("empty task list: stdout %q, stderr %q", out, errOut)
	}
}

func TestRenderLock(t *testing.T) {
	exp := at2
	held := lock.Lock{Name: "db", Claim: &tools.Claim{Holder: "w1", At: at1}, Reason: "migrating", ExpiresAt: &exp, UpdatedAt: at1, UpdatedBy: "w1"}
	out, _ := renderOut(t, false, "lock_acquire", held)
	checkLines(t, "held lock", out,
		"lock db held by w1 since 2024-03-01T10:30:00Z",
		"expires: 2024-03-02T08:15:00Z",
		"reason:  migrating")

	plain := lock.Lock{Name: "src/api", Claim: &tools.Claim{Holder: "w2", At: at0}}
	out, _ = renderOut(t, true, "lock_acquire", plain)
	checkLines(t, "held lock without ttl or reason", out, "lock src/api held by w2 since 2024-03-01T09:00:00Z")

	out, _ = renderOut(t, false, "lock_release", lock.Lock{Name: "db", UpdatedAt: at2, UpdatedBy: "w1"})
	checkLines(t, "free lock", out, "lock db is free")
}

func TestRenderLockList(t *testing.T) {
	exp := at2
	list := lock.LockList{Count: 2, Locks: []lock.Lock{
		{Name: "db", Claim: &tools.Claim{Holder: "w1", At: at1}, Reason: "migrating\nschema", ExpiresAt: &exp},
		{Name: "release", Claim: &tools.Claim{Holder: "human:ann@example.com", At: at0}},
	}}
	out, _ := renderOut(t, true, "lock_list", list)
	checkLines(t, "lock list on a terminal", out,
		"NAME     HOLDER                 SINCE       EXPIRES     REASON",
		"db       w1                     2024-03-01  2024-03-02  migrating schema",
		"release  human:ann@example.com  2024-03-01  -           -")
	out, _ = renderOut(t, false, "lock_list", list)
	checkLines(t, "lock list piped", out,
		"db\tw1\t2024-03-01T10:30:00Z\t2024-03-02T08:15:00Z\tmigrating schema",
		"release\thuman:ann@example.com\t2024-03-01T09:00:00Z\t-\t-")

	// on a terminal an expiry ahead reads as "in ..."
	soon := time.Now().Add(3*time.Hour + 30*time.Minute)
	out, _ = renderOut(t, true, "lock_list", lock.LockList{Count: 1, Locks: []lock.Lock{
		{Name: "db", Claim: &tools.Claim{Holder: "w1", At: time.Now()}, ExpiresAt: &soon},
	}})
	checkLines(t, "lock list with an expiry ahead", out,
		"NAME  HOLDER  SINCE     EXPIRES  REASON",
		"db    w1      just now  in 3h    -")

	out, errOut := renderOut(t, false, "lock_list", lock.LockList{Locks: []lock.Lock{}})
	if out != "" || errOut != "no locks held\n" {
		t.Errorf("empty lock list: stdout %q, stderr %q", out, errOut)
	}
}

func TestRenderConflictList(t *testing.T) {
	list := work.ConflictList{Count: 1, Conflicts: []tools.Conflict{{
		ID: "c-00112233445566778899", Kind: "lock", Resource: "db", Record: "locks/a/b/ab.json",
		Winner: &tools.Claim{Holder: "w1", Clock: 4, At: at0}, Loser: tools.Claim{Holder: "w2", Clock: 5, At: at1},
		CreatedAt: at1, Clock: 5,
	}}}
	out, _ := renderOut(t, true, "conflict_list", list)
	checkLines(t, "conflict list on a terminal", out,
		"ID                      KIND  RESOURCE  WINNER  LOSER  WHEN",
		"c-00112233445566778899  lock  db        w1      w2     2024-03-01")
	out, _ = renderOut(t, false, "conflict_list", list)
	checkLines(t, "conflict list piped", out,
		"c-00112233445566778899\tlock\tdb\tw1\tw2\t2024-03-01T10:30:00Z")

	out, errOut := renderOut(t, false, "conflict_list", work.ConflictList{Conflicts: []tools.Conflict{}})
	if out != "" || errOut != "no conflicts\n" {
		t.Errorf("empty conflict list: stdout %q, stderr %q", out, errOut)
	}
}

func TestGroupUsageNewGroups(t *testing.T) {
	for _, g := range []string{"task", "lock", "conflict"} {
		if groupUsage(g) == "" {
			t.Errorf("group %q has no usage line", g)
		}
	}
}
