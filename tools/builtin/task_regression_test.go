package builtin_test

// Regressions from a second review of the claim merge and the task tools:
// each comment tells the bug as it was, the test pins the fix.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/work"
)

func regressionTask(t *testing.T, state string, claim *tools.Claim, clock gitstate.Clock, by string) []byte {
	t.Helper()
	at := time.Date(2026, 3, 1, 0, 0, int(clock), 0, time.UTC)
	return mustJSON(t, work.Task{ID: "t-0123456789abcdef", Title: "x", State: state, Claim: claim,
		CreatedBy: "boss", UpdatedAt: at, UpdatedBy: by, Clock: clock})
}

// TestRegressionCancelledTaskComesBack: a PENDING task is CANCELLED on one
// machine (claim stays null) while w1 claims it on the other. claimSide
// sees "a claim on one side, none on the other, the claim is new" and
// keeps the claim and its coupled state: the merged task is IN_PROGRESS,
// the cancellation is gone, and no conflict or mail tells anyone. The tool
// says "COMPLETED and CANCELLED are final".
func TestRegressionCancelledTaskComesBack(t *testing.T) {
	p := "tasks/e/f/t-0123456789abcdef.json"
	base := regressionTask(t, work.TaskPending, nil, 1, "boss")
	cancelled := regressionTask(t, work.TaskCancelled, nil, 5, "boss")
	claimed := regressionTask(t, work.TaskInProgress, &tools.Claim{Holder: "w1", Clock: 6, At: time.Date(2026, 3, 1, 0, 0, 6, 0, time.UTC)}, 6, "w1")
	var tk work.Task
	if err := json.Unmarshal(both(t, p, base, cancelled, claimed), &tk); err != nil {
		t.Fatal(err)
	}
	if tk.State != work.TaskCancelled {
		t.Errorf("merged task is %s held by %+v: a cancellation was undone by a concurrent claim", tk.State, tk.Claim)
	}
}

// TestRegressionFinalStateLeftByFieldMerge: w1 holds the task; on one machine
// its creator CANCELLEDs it, on the other w1 (later clock) submits it for
// REVIEW. Same claim on both sides, so state merges field by field, newer
// wins: REVIEW. A final state is left by the merge.
func TestRegressionFinalStateLeftByFieldMerge(t *testing.T) {
	p := "tasks/e/f/t-0123456789abcdef.json"
	w1 := &tools.Claim{Holder: "w1", Clock: 2, At: time.Date(2026, 3, 1, 0, 0, 2, 0, time.UTC)}
	base := regressionTask(t, work.TaskInProgress, w1, 2, "w1")
	cancelled := regressionTask(t, work.TaskCancelled, w1, 5, "boss")
	review := regressionTask(t, work.TaskReview, w1, 7, "w1")
	var tk work.Task
	if err := json.Unmarshal(both(t, p, base, cancelled, review), &tk); err != nil {
		t.Fatal(err)
	}
	if tk.State != work.TaskCancelled {
		t.Errorf("merged task is %s: CANCELLED on one side is not final after sync", tk.State)
	}
}

// TestRegressionClaimKeepsUnknownFields: mergeExclusive re-marshals the kept
// claim through the Claim struct (to normalise its time to UTC), which
// drops any field a newer version added to the claim (e.g. a token hash):
// an older machine's merge loses it, though nothing else changed it.
func TestRegressionClaimKeepsUnknownFields(t *testing.T) {
	p := lockFile("db")
	base := []byte(`{"name":"db","claim":null,"updated_at":"2026-03-01T00:00:00Z","updated_by":"w1","clock":1}`)
	ours := []byte(`{"name":"db","claim":{"holder":"w1","clock":3,"at":"2026-03-01T00:00:03Z","token_hash":"abc"},"reason":"r","updated_at":"2026-03-01T00:00:03Z","updated_by":"w1","clock":3}`)
	theirs := []byte(`{"name":"db","claim":null,"note":"other machine","updated_at":"2026-03-01T00:00:04Z","updated_by":"w2","clock":4}`)
	if err := builtin.Registry().Kinds().ValidateRecord(p, ours); err != nil {
		t.Fatalf("setup: %v", err)
	}
	got := both(t, p, base, ours, theirs)
	if !strings.Contains(string(got), "token_hash") {
		t.Errorf("the merge dropped the claim's token_hash:\n%s", got)
	}
}

// TestRegressionHolderToldWhenCreatorEndsTask: task_update_status lets a
// task's creator (an orchestrator here) CANCEL a task someone else holds;
// unlike task_release --force (notifyTaken) the holder is not told, and
// keeps working on a cancelled task.
func TestRegressionHolderToldWhenCreatorEndsTask(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"orch","type":"orchestrator"}`)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	id := e.ok("orch", "task_create", `{"title":"t","description":"d"}`)["id"].(string)
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	before := e.ok("w1", "mail_list_inbox", `{}`)["count"].(float64)
	e.ok("orch", "task_update_status", `{"id":"`+id+`","state":"CANCELLED"}`)
	after := e.ok("w1", "mail_list_inbox", `{}`)["count"].(float64)
	if after == before {
		t.Errorf("orch cancelled task %s held by w1 and w1 was not told (inbox %v -> %v)", id, before, after)
	}
}

// TestRegressionFinalStatusIsIdempotent: repeating task_update_status with the
// state the task is already in is a no-op for every state but the final
// ones: a retried "COMPLETED" (lost reply, MCP retry) fails INVALID_INPUT.
func TestRegressionFinalStatusIsIdempotent(t *testing.T) {
	e := newEnv(t)
	e.ok(human, "agent_register", `{"id":"w1","type":"worker"}`)
	id := e.ok(human, "task_create", `{"title":"t","description":"d"}`)["id"].(string)
	e.ok("w1", "task_claim", `{"id":"`+id+`"}`)
	e.ok("w1", "task_update_status", `{"id":"`+id+`","state":"REVIEW"}`)
	e.ok(human, "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`)
	if r := e.call(human, "task_update_status", `{"id":"`+id+`","state":"COMPLETED"}`); !r.OK {
		t.Errorf("retrying COMPLETED: %+v", r.Error)
	}
}
