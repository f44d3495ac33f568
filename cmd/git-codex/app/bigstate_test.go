package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

// TestMakeBigState writes the state a month of the simulated team leaves
// at retention's default of 30 days (issue 27: ~63k live records), into
// the directory GIT_CODEX_BIGSTATE names, for BenchmarkViewsOnAState
// (GIT_CODEX_VIEWS_STATE=<that directory>) to measure the views on. The
// team simulation archives daily to stay fast, so its clones hold ~2.5k
// records; a month of it at the default would take hours. This writes
// only what stays on the tip, hour by simulated hour, through the real
// registry and store on a simulated clock: the simulation's changes
// (docs/PERFORMANCE.md, "The mix") without its polls and syncs — per
// hour 4 mails from each of the 20 agents, each read by its recipient,
// 2 tasks created by each supervisor, 8 claimed and completed by workers
// two hours later (task.allow_skip_review), a decision, a lock taken and released. Every call is
// one commit, so the history has the month's ~4.5k changes a day too.
// GIT_CODEX_BIGSTATE_SPAN is the span ("30d" by default, "1d" for the
// small state beside it). A directory that already holds a state is kept
// as it is (made once, measured many times); the state is written beside
// it and moved there when whole. Skipped without GIT_CODEX_BIGSTATE.
func TestMakeBigState(t *testing.T) {
	final := os.Getenv("GIT_CODEX_BIGSTATE")
	if final == "" {
		t.Skip("GIT_CODEX_BIGSTATE names no directory to write the state into")
	}
	if _, err := os.Stat(filepath.Join(final, ".git")); err == nil {
		t.Logf("%s holds a state already: kept", final)
		return
	}
	span := simSpan(t, os.Getenv("GIT_CODEX_BIGSTATE_SPAN"), 30*24*time.Hour)
	dir := final + ".part"
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, "/", "init", "-q", dir)
	simConfigRepo(t, dir)

	// the simulated clock ends an hour before the real one, so "a week
	// back" and the relative times views print mean what they say
	start := time.Now().Add(-span - time.Hour).UTC().Truncate(time.Hour)
	now := start
	st, err := gitstate.Open(dir, gitstate.Options{Now: func() time.Time { now = now.Add(time.Millisecond); return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reg := builtin.Registry()
	if _, err := reg.Init(ctx, st, tools.Origin{ID: simHuman}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	call := func(o tools.Origin, tool string, args any, out any) {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		res := reg.CallAs(ctx, st, o, tool, b)
		calls++
		if !res.OK {
			t.Fatalf("%s by %s: %v", tool, o.ID, res.Error)
		}
		if out != nil {
			d, _ := json.Marshal(res.Data)
			if err := json.Unmarshal(d, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	// tasks go from IN_PROGRESS to COMPLETED, as the simulation's
	// workers ask (a team without reviews says so)
	call(tools.Origin{ID: simHuman}, "config_set", map[string]any{"key": "task.allow_skip_review", "value": "on"}, nil)
	var workers, supervisors []tools.Origin
	for i := 0; i < 20; i++ {
		id, typ := fmt.Sprintf("w%02d", i), "worker"
		if i >= 16 {
			id, typ = fmt.Sprintf("s%02d", i-16), "supervisor"
		}
		var out struct {
			Token string `json:"token"`
		}
		call(tools.Origin{ID: simHuman}, "agent_register", map[string]any{"id": id, "type": typ}, &out)
		o := tools.Origin{ID: id, Token: out.Token}
		if typ == "worker" {
			workers = append(workers, o)
		} else {
			supervisors = append(supervisors, o)
		}
	}
	agents := append(append([]tools.Origin{}, workers...), supervisors...)
	byID := map[string]tools.Origin{}
	for _, a := range agents {
		byID[a.ID] = a
	}

	rng := rand.New(rand.NewPCG(1, 27))
	type claimed struct {
		task string
		by   tools.Origin
		at   int // the hour it was claimed
	}
	var pending []string
	var working []claimed
	began := time.Now()
	hours := int(span / time.Hour)
	for h := 0; h < hours; h++ {
		hour := start.Add(time.Duration(h) * time.Hour)
		last := h == hours-1
		// 80 mails spread over the hour, each read by its recipient half
		// a minute later (but in the last hour: what the views find unread)
		for i := 0; i < 4*len(agents); i++ {
			if at := hour.Add(time.Duration(i) * time.Hour / time.Duration(4*len(agents))); at.After(now) {
				now = at
			}
			from, to := agents[rng.IntN(len(agents))], agents[rng.IntN(len(agents))]
			var sent struct {
				MailID string `json:"mail_id"`
			}
			call(from, "mail_send", map[string]any{"to": to.ID, "subject": fmt.Sprintf("progress %d", calls),
				"body": "Finished the parser changes for the tokenizer; tests pass locally. Next: the error paths and their messages."}, &sent)
			if !last {
				now = now.Add(30 * time.Second)
				call(byID[to.ID], "mail_read", map[string]any{"mail_id": sent.MailID}, nil)
			}
		}
		for i, s := range supervisors {
			for j := 0; j < 2; j++ {
				var task struct {
					ID string `json:"id"`
				}
				call(s, "task_create", map[string]any{"title": fmt.Sprintf("task %d", calls), "description": "Make the importer accept the new header format and add a test for it."}, &task)
				pending = append(pending, task.ID)
			}
			if h%4 == i {
				call(s, "log_decision", map[string]any{"title": fmt.Sprintf("decision %d", calls), "body": "Keep the old format readable for a release; the importer converts it."}, nil)
			}
		}
		for len(working) > 0 && working[0].at <= h-2 {
			call(working[0].by, "task_update_status", map[string]any{"id": working[0].task, "state": "COMPLETED"}, nil)
			working = working[1:]
		}
		for i := 0; i < 8 && len(pending) > 0; i++ {
			w := workers[(h*8+i)%len(workers)]
			call(w, "task_claim", map[string]any{"id": pending[0]}, nil)
			working = append(working, claimed{pending[0], w, h})
			pending = pending[1:]
		}
		w := workers[h%len(workers)]
		lock := fmt.Sprintf("area-%d", h%simLockNames)
		call(w, "lock_acquire", map[string]any{"name": lock, "reason": "editing"}, nil)
		if !last {
			call(w, "lock_release", map[string]any{"name": lock}, nil)
		}
		if h%24 == 23 || last {
			fmt.Fprintf(os.Stderr, "bigstate: %d simulated hours, %d calls, %s\n", h+1, calls, time.Since(began).Round(time.Second))
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	gitstatetest.WaitForMaintenance(t, dir)
	// a month-old repository has been through git's gc (gc --auto), which
	// also writes the commit-graph `?at=` walks with
	if out, err := exec.Command("git", "-C", dir, "gc", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git gc: %v\n%s", err, out)
	}
	if err := os.Rename(dir, final); err != nil {
		t.Fatal(err)
	}
	records := gitstatetest.Git(t, final, "ls-tree", "-r", "--name-only", gitstate.RefState)
	fmt.Fprintf(os.Stderr, "bigstate: %s: %d calls in %s, %d records at the tip\n", final, calls, time.Since(began).Round(time.Second), countLines(records))
}

func countLines(s string) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	if s != "" {
		n++
	}
	return n
}
