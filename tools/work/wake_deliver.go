package work

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/mail"
)

// Waker delivers wake-ups for one watcher process (docs/WATCH.md). A pass
// reads the state, and for each recipient with arrivals it has not been
// told of, checks outside the writer lock that the recipient is at its
// input, claims the arrivals in one transaction, types one nudge for all
// of them (send's own delivery: nudge), and records the outcome in
// another. Its only memory of its own is how long a recipient's pending
// set has been unchanged (Settle), which folds a burst into one nudge.
type Waker struct {
	Store  *gitstate.Store
	Env    tools.Env
	Keys   *tools.ConfigKeys // the settings table (Registry.ConfigKeys)
	Caller tools.Caller      // the person the watcher acts for
	// Holder names this watcher in claims: watch:<host>:<pid>.
	Holder string
	// Settle is how long a recipient's pending arrivals must stay the
	// same before they are announced, so that a burst is one nudge.
	Settle time.Duration
	// Report is told of every attempt (nil: nobody).
	Report func(WakeEvent)

	seen map[string]pendingSince
	// elsewhere is, per recipient, the claim and arrivals last reported
	// as waiting for another watcher (claimedElsewhere): said once, not
	// each pass while that claim lasts
	elsewhere map[string]string
}

// WakeEvent is one attempt, for the watcher's terminal.
type WakeEvent struct {
	Recipient string
	Outcome   string // delivered, deferred or failed
	Why       string
	Items     []string
}

type pendingSince struct {
	sig   string
	since time.Time
}

// wakeDue is one recipient with arrivals it has not been told of.
type wakeDue struct {
	agent   tools.Agent // zero for the humans' inbox
	to      string
	wake    Wake
	pending []Arrival
}

// errNoWake aborts a claim's transaction without a commit: the arrivals
// were announced or claimed meanwhile.
var errNoWake = errors.New("nothing to wake")

// Pass runs one round of wake-ups and returns how many were delivered.
func (w *Waker) Pass(ctx context.Context) (int, error) {
	if w.seen == nil {
		w.seen = map[string]pendingSince{}
	}
	var dues []wakeDue
	var tm tmux.Runner
	var perMinute int
	var humanCmd string
	err := w.Store.View(ctx, func(sn *gitstate.Snapshot) error {
		if sn.Commit() == "" {
			return nil
		}
		cfg, err := tools.LoadConfig(sn, w.Keys)
		if err != nil {
			return err
		}
		tm, perMinute, humanCmd = instance.Tmux(cfg, w.Env), cfg.IntValue("wake.max_per_minute"), cfg.StringValue("wake.human_command")
		var who []wakeDue
		if perMinute > 0 {
			err = walkRecords(sn, tools.DirAgents, func(a tools.Agent) {
				if a.Status != "" && !instance.Final(a.Status) && a.Status != tools.StatusStarting && a.CleanedAt == nil {
					who = append(who, wakeDue{agent: a, to: a.ID})
				}
			})
			if err != nil {
				return err
			}
		}
		if humanCmd != "" {
			who = append(who, wakeDue{to: tools.HumanInbox})
		}
		for _, d := range who {
			all, err := arrivals(sn, d.to)
			if err != nil {
				return err
			}
			if d.wake, err = getWake(sn, d.to); err != nil {
				return err
			}
			if d.pending = d.wake.unannounced(all); len(d.pending) > 0 {
				dues = append(dues, d)
			}
		}
		return nil
	})
	if err != nil {
		return 0, tools.StoreError(err)
	}
	now := time.Now()
	due := map[string]bool{}
	delivered := 0
	for _, d := range dues {
		due[d.to] = true
		sig := strings.Join(ids2(d.pending), ",")
		if s, ok := w.seen[d.to]; !ok || s.sig != sig {
			w.seen[d.to] = pendingSince{sig: sig, since: now}
		}
		if now.Sub(w.seen[d.to].since) < w.Settle {
			continue // more may be on the way: fold them into one nudge
		}
		ok, err := w.wake(ctx, tm, perMinute, humanCmd, d)
		if err != nil {
			return delivered, err
		}
		if ok {
			delivered++
		}
	}
	for to := range w.seen {
		if !due[to] {
			delete(w.seen, to)
		}
	}
	return delivered, nil
}

// wake tries one recipient: checks, claims, types, records.
func (w *Waker) wake(ctx context.Context, tm tmux.Runner, perMinute int, humanCmd string, d wakeDue) (bool, error) {
	if c := d.wake.Claim; c != nil && w.Store.WorkHeld(c.Mark) {
		w.claimedElsewhere(d, c) // another watcher is delivering it now
		return false, nil
	}
	now := time.Now()
	if d.to != tools.HumanInbox {
		if n := len(d.wake.recent(now)); n >= perMinute {
			return false, w.defer_(ctx, d, fmt.Sprintf("rate limit: %d nudge(s) in the last minute (wake.max_per_minute %d)", n, perMinute))
		}
		s, err := instance.Pane(ctx, tm, d.agent.TmuxSession)
		if err != nil || s.PaneDead {
			return false, nil // no session here: reap's to record, or another machine's instance
		}
		if why, ok := wakeReady(ctx, tm, d.agent); !ok {
			return false, w.defer_(ctx, d, why)
		}
	}
	claimID := "w-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	mark := "wake-" + claimID
	release, err := w.Store.HoldWork(mark)
	if err != nil {
		return false, nil // taken by someone else this very moment
	}
	defer release()
	var items []Arrival
	var other *WakeClaim
	err = w.record(ctx, d.to, func(c *tools.Call, wk *Wake, all []Arrival) error {
		if wk.Claim != nil && c.Repo.WorkHeld(wk.Claim.Mark) {
			other = wk.Claim
			return errNoWake
		}
		now := c.Tx.Now()
		items = wk.unannounced(all)
		if len(items) == 0 || (d.to != tools.HumanInbox && len(wk.recent(now)) >= perMinute) {
			return errNoWake
		}
		wk.Claim = &WakeClaim{ID: claimID, Holder: w.Holder, Mark: mark, Items: ids2(items), At: now}
		if d.to != tools.HumanInbox {
			wk.Nudges = append(wk.recent(now), now)
		}
		c.Summarize("%s claims the wake-up of %s for %d arrival(s)", w.Holder, d.to, len(items))
		return nil
	})
	if errors.Is(err, errNoWake) {
		if other != nil {
			w.claimedElsewhere(d, other)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	text := WakeText(items)
	var derr error
	if d.to == tools.HumanInbox {
		derr = runHumanCommand(ctx, humanCmd, text, items)
	} else {
		_, derr = instance.Nudge(ctx, tm, d.agent, text)
	}
	outcome, why := WakeDelivered, ""
	if derr != nil {
		outcome, why = WakeFailed, tools.AsError(derr).Message
		var te *tools.Error
		if errors.As(derr, &te) && te.Details["screen"] != nil {
			outcome = WakeDeferred // a dialog came up between the look and the typing
		}
	}
	err = w.record(ctx, d.to, func(c *tools.Call, wk *Wake, all []Arrival) error {
		if wk.Claim != nil && wk.Claim.ID == claimID {
			wk.Claim = nil
		}
		wk.Outcome, wk.Why, wk.Items = outcome, why, ids2(items)
		if outcome == WakeDelivered {
			wk.Announced = append(wk.Announced, ids2(items)...)
			wk.Delivered++
			c.Summarize("%s woke %s: %d arrival(s)", w.Holder, d.to, len(items))
		} else {
			c.Summarize("%s could not wake %s (%s): %s", w.Holder, d.to, outcome, mail.OneLineCut(why))
		}
		return nil
	})
	w.report(WakeEvent{Recipient: d.to, Outcome: outcome, Why: why, Items: ids2(items)})
	return outcome == WakeDelivered, err
}

// defer_ records, once per reason, that a recipient could not be woken
// now; the next pass tries again.
func (w *Waker) defer_(ctx context.Context, d wakeDue, why string) error {
	ids := ids2(d.pending)
	if d.wake.Outcome == WakeDeferred && d.wake.Why == why && slices.Equal(d.wake.Items, ids) {
		return nil // already recorded: a busy agent is not a commit per pass
	}
	w.report(WakeEvent{Recipient: d.to, Outcome: WakeDeferred, Why: why, Items: ids})
	err := w.record(ctx, d.to, func(c *tools.Call, wk *Wake, all []Arrival) error {
		wk.Outcome, wk.Why, wk.Items = WakeDeferred, why, ids
		c.Summarize("%s defers the wake-up of %s: %s", w.Holder, d.to, mail.OneLineCut(why))
		return nil
	})
	if errors.Is(err, errNoWake) {
		return nil
	}
	return err
}

// claimedElsewhere reports as deferred the arrivals that another
// watcher's live claim does not cover: it claimed what it saw before
// they came (two `watch --once` runs: one woke an instance for its mail
// while the other delivered a GitHub review, whose feedback then waited
// for a later run: github_reviews.txtar under load). Only this watcher is
// told, nothing is recorded (the claim's holder records its own outcome),
// so that --once passes again (onceGrace) and wakes for them once the
// claim is released; a running watcher's next pass does so anyway.
func (w *Waker) claimedElsewhere(d wakeDue, c *WakeClaim) {
	var left []string
	for _, id := range ids2(d.pending) {
		if !slices.Contains(c.Items, id) {
			left = append(left, id)
		}
	}
	sig := c.ID + ":" + strings.Join(left, ",")
	if len(left) > 0 && w.elsewhere[d.to] != sig {
		if w.elsewhere == nil {
			w.elsewhere = map[string]string{}
		}
		w.elsewhere[d.to] = sig
		w.report(WakeEvent{Recipient: d.to, Outcome: WakeDeferred, Why: c.Holder + " is waking it for earlier arrivals: these follow", Items: left})
	}
}

func (w *Waker) report(e WakeEvent) {
	if w.Report != nil {
		w.Report(e)
	}
}

// record changes a recipient's wake record in one transaction, audited as
// the watcher's (tool "watch"); fn returning errNoWake commits nothing.
// Announced is pruned to arrivals still waiting (mail read since is no
// longer anyone's to announce).
func (w *Waker) record(ctx context.Context, to string, fn func(c *tools.Call, wk *Wake, all []Arrival) error) error {
	_, err := tools.Update(ctx, w.Store, func(tx *gitstate.Tx) error {
		c, _ := tools.CallFor(tx, tools.Audit{Caller: w.Caller, Tool: "watch", Env: w.Env, Repo: tools.RepoOf(w.Store)})
		wk, err := getWake(tx, to)
		if err != nil {
			return err
		}
		all, err := arrivals(tx, to)
		if err != nil {
			return err
		}
		if err := fn(c, &wk, all); err != nil {
			return err
		}
		var kept []string
		for _, id := range wk.Announced {
			if slices.ContainsFunc(all, func(a Arrival) bool { return a.ID == id }) && !slices.Contains(kept, id) {
				kept = append(kept, id)
			}
		}
		wk.Announced = kept
		if wk.Announced == nil {
			wk.Announced = []string{}
		}
		wk.Recipient, wk.UpdatedAt, wk.UpdatedBy, wk.Clock = to, tx.Now(), w.Caller.ID, tx.Clock()
		if err := tx.Put(wakePath(to), wk); err != nil {
			return err
		}
		c.Target(to)
		c.Audit(nil)
		return nil
	})
	if errors.Is(err, errNoWake) {
		return err
	}
	if err != nil {
		return tools.StoreError(err)
	}
	return nil
}

// wakeReady reports whether an instance's pane waits at the agent's input:
// no dialog or menu (send's own check, BlockedAt), no mark of a turn
// under way near the bottom of the screen, and a screen that does not
// change for a moment (an agent printing is not at its input). why says
// what it is doing otherwise.
func wakeReady(ctx context.Context, tm tmux.Runner, a tools.Agent) (string, bool) {
	screen, err := tm.Capture(ctx, a.TmuxSession)
	if err != nil {
		return fmt.Sprintf("its pane could not be read: %v", err), false
	}
	// an idle agent's pane may still change once (Claude Code's footer
	// swaps its hint line): wait for it to go quiet, for up to quietWait,
	// rather than defer on the first difference
	deadline := time.Now().Add(quietWait)
	for {
		if b, ok := instance.BlockedAt(a.Launcher, screen); ok {
			return "its pane shows " + b.What, false
		}
		if m, ok := instance.BusyAt(screen); ok {
			return fmt.Sprintf("it is working (its pane shows %q)", m), false
		}
		select {
		case <-ctx.Done():
			return "stopped", false
		case <-time.After(quietFor):
		}
		again, err := tm.Capture(ctx, a.TmuxSession)
		if err != nil {
			return fmt.Sprintf("its pane could not be read: %v", err), false
		}
		if again == screen {
			return "", true
		}
		if time.Now().After(deadline) {
			return "its pane is still printing", false
		}
		screen = again
	}
}

// quietFor is how long a pane must not change to count as waiting, and
// quietWait how long a pane that keeps changing is watched before the
// wake-up is deferred.
const (
	quietFor  = 300 * time.Millisecond
	quietWait = 2 * time.Second
)

// runHumanCommand runs wake.human_command for mail to the humans.
func runHumanCommand(ctx context.Context, command, text string, items []Arrival) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Env = append(os.Environ(), "CODEX_WAKE_TEXT="+text, "CODEX_WAKE_COUNT="+strconv.Itoa(len(items)), "CODEX_WAKE_IDS="+strings.Join(ids2(items), " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return tools.Errorf(tools.NudgeNotDelivered, "wake.human_command failed: %v: %s", err, cutRunes(string(out), 200))
	}
	return nil
}
