package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/forge"
	"github.com/gitcodex/git-codex/tools/instance"
	"github.com/gitcodex/git-codex/tools/work"
	"github.com/urfave/cli/v2"
)

// watchOptions are `git codex watch`'s flags.
type watchOptions struct {
	Remotes  []string
	Interval time.Duration
	Settle   time.Duration
	Once     bool
	NoSync   bool
	// ArchiveEvery is how often retention runs (watch_retention.go); 0
	// never.
	ArchiveEvery time.Duration
}

// watchCommand is the one watcher of a machine (docs/WATCH.md): it keeps
// the state in step with the remotes, wakes instances when something
// arrives for them, reaps dead ones and replays GitHub calls that are due.
// Everything it knows is in the state, so it can be killed at any point
// and two of them can run side by side.
func (e *env) watchCommand() *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "keep this machine in step: sync, deliver GitHub reviews, wake instances on mail and feedback, reap, retry GitHub, archive (foreground)",
		Description: "Runs until interrupted, printing one line per event. Each pass: syncs with the remotes (on a local\n" +
			"change, and every --interval, backing off while a remote fails), types one folded nudge into the pane\n" +
			"of each live instance that has unread mail or new review feedback (only when it waits at its input;\n" +
			"at most wake.max_per_minute), runs wake.human_command for mail to the humans if set, reaps instances\n" +
			"whose session died and reviews past review.timeout_hours, and replays GitHub calls that are due.\n" +
			"Every --interval it also fetches the GitHub reviews of pull requests instances opened and delivers\n" +
			"each new one to its instance as review feedback (REVIEW_FEEDBACK.md commit, note, wake-up), once.\n" +
			"Deliveries are claimed and recorded in the state (wake/<recipient>.json): killing the watcher loses\n" +
			"nothing, and two watchers never type the same nudge. When retention.days (or a retention.<kind>.days) is\n" +
			"set, it runs `git codex archive` once every --archive-every, counted from the newest record archive\n" +
			"(refs/codex/archive/records-*, any machine's); without them it archives nothing. See docs/WATCH.md for\n" +
			"systemd and launchd units.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "remote", Usage: "sync with this `REMOTE` (repeatable; default origin, if there is one)"},
			&cli.DurationFlag{Name: "interval", Value: 30 * time.Second, Usage: "how often to fetch from the remotes when nothing changed here"},
			&cli.DurationFlag{Name: "settle", Value: 2 * time.Second, Usage: "how long arrivals must stop coming before the nudge (a burst is one nudge)"},
			&cli.BoolFlag{Name: "once", Usage: "one pass (after --settle), then exit: for cron and tests (a wake-up deferred meanwhile is tried again for up to 5s)"},
			&cli.BoolFlag{Name: "no-sync", Usage: "never fetch or push"},
			&cli.DurationFlag{Name: "archive-every", Value: 24 * time.Hour, Usage: "run `git codex archive` this often when retention.days is set (0: never)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{err: fmt.Errorf("watch takes no arguments")}
			}
			opts := watchOptions{Remotes: c.StringSlice("remote"), Interval: c.Duration("interval"), Settle: c.Duration("settle"), Once: c.Bool("once"), NoSync: c.Bool("no-sync"),
				ArchiveEvery: c.Duration("archive-every")}
			if opts.Interval <= 0 || opts.Settle < 0 || opts.ArchiveEvery < 0 {
				return usageError{err: fmt.Errorf("--interval must be positive, --settle and --archive-every not negative")}
			}
			o, st, err := e.origin(c)
			if err != nil {
				return err
			}
			defer st.Close()
			if ok, err := st.Initialized(c.Context); err != nil || !ok {
				return tools.StoreError(err)
			}
			if !opts.NoSync && len(opts.Remotes) == 0 {
				if remotes, err := st.Remotes(c.Context); err == nil && contains(remotes, "origin") {
					opts.Remotes = []string{"origin"}
				}
			}
			for _, r := range opts.Remotes {
				if err := knownRemote(c, st, r); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return e.runWatch(ctx, st, o, opts)
		},
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// watcher is one run of `git codex watch`.
type watcher struct {
	e      *env
	st     *gitstate.Store
	origin tools.Origin
	opts   watchOptions
	waker  *work.Waker
	review *work.ReviewFetcher

	nextSync   map[string]time.Time
	backoff    map[string]time.Duration
	lastSynced string // the local tip after the last sync: a change since is pushed
	lastChange time.Time
	nextReap   time.Time
	nextGitHub time.Time
	nextReview time.Time
	// nextRetention is when retention looks at the settings and the
	// archives again (watch_retention.go)
	nextRetention time.Time
	// nextReadsFold is when retention looks again for this machine's
	// reads days to fold while another's archive is fresh
	nextReadsFold time.Time
	reported      map[string]string // the last line per subject, not repeated
	// deferred holds the recipients whose last wake-up was deferred
	// (nothing typed), for --once
	deferred map[string]bool
}

// onceGrace is how long --once goes on passing while a wake-up is
// deferred. A pane that changed while the watcher looked is not always an
// agent at work: Claude Code, idle at its input, shows a hint in its
// footer and takes it away a few seconds later, and a look that spans that
// moment defers the wake-up. The running watcher's next pass types; a
// single pass exited with the wake-up undone (3 runs in 45 of
// agents_claude_wake_once.txtar with the CPUs busy). A wake-up still
// deferred after onceGrace is left to the next run. Only deferrals this
// run saw count: one already on the record with the same reason is not
// reported again (Waker.defer_), and the run exits as before.
const onceGrace = 5 * time.Second

func (e *env) runWatch(ctx context.Context, st *gitstate.Store, o tools.Origin, opts watchOptions) error {
	host, _ := os.Hostname()
	caller := tools.Caller{ID: o.ID}
	if tools.IsHuman(o.ID) {
		caller.Type = tools.TypeHuman
	}
	w := &watcher{e: e, st: st, origin: o, opts: opts,
		nextSync: map[string]time.Time{}, backoff: map[string]time.Duration{}, reported: map[string]string{}, deferred: map[string]bool{}}
	w.waker = &work.Waker{Store: st, Env: e.reg.Env(), Keys: e.reg.ConfigKeys(), Caller: caller, Holder: fmt.Sprintf("watch:%s:%d", host, os.Getpid()), Settle: opts.Settle,
		Report: func(ev work.WakeEvent) {
			// for --once (a deferral already recorded is not reported
			// again: the recipient stays deferred until an outcome is)
			switch {
			case !opts.Once:
			case ev.Outcome == work.WakeDeferred:
				w.deferred[ev.Recipient] = true
			default:
				delete(w.deferred, ev.Recipient)
			}
			line := fmt.Sprintf("wake %s: %s (%d arrival(s): %s)", ev.Recipient, ev.Outcome, len(ev.Items), strings.Join(ev.Items, " "))
			if ev.Why != "" {
				line += ": " + ev.Why
			}
			w.say(line)
		}}
	w.review = &work.ReviewFetcher{Store: st, Env: e.reg.Env(), Keys: e.reg.ConfigKeys(), Caller: caller, Holder: w.waker.Holder, Backoff: true,
		Report: func(ev work.ReviewEvent) {
			r := ev.Review
			line := fmt.Sprintf("github review %d (%s by @%s) of #%d for %s: delivered as %.12s", r.ReviewID, r.State, r.User, r.PR, r.Coder, r.Commit)
			if r.Completed != "" {
				line += "; task " + r.Completed + " COMPLETED"
			}
			if r.SentBack != "" {
				line += "; task " + r.SentBack + " IN_PROGRESS again"
			}
			w.say(line)
		}}
	// --once makes one pass and exits: saying "every 30s" there told a
	// cron user it would keep running
	pace := "every " + opts.Interval.String()
	if opts.Once {
		pace = "one pass after " + opts.Settle.String() + " to settle"
	}
	w.say(fmt.Sprintf("watching as %s (remotes: %s; %s)", w.waker.Holder, orNone(opts.Remotes), pace))
	poll := min(opts.Interval, 500*time.Millisecond)
	first := time.Now()
	for {
		// --once ends after the first pass that starts once --settle
		// has passed: arrivals seen by an earlier pass have settled by
		// then; while a wake-up is deferred, it passes again (onceGrace)
		settled := time.Since(first) >= opts.Settle
		w.pass(ctx)
		if ctx.Err() != nil || (opts.Once && settled && (len(w.deferred) == 0 || time.Since(first) >= opts.Settle+onceGrace)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// say prints one event line.
func (w *watcher) say(line string) {
	fmt.Fprintf(w.e.stdout, "%s %s\n", time.Now().Format("15:04:05"), line)
}

// sayOnce prints a line unless it is what subject said last.
func (w *watcher) sayOnce(subject, line string) {
	if w.reported[subject] == line {
		return
	}
	w.reported[subject] = line
	w.say(line)
}

// pass is one round: sync, GitHub reviews, wake, reap, GitHub retries,
// retention.
// Reviews come before wake-ups, so that a review's feedback wakes its
// instance in the same pass.
func (w *watcher) pass(ctx context.Context) {
	w.sync(ctx)
	if ctx.Err() != nil {
		return
	}
	if now := time.Now(); now.After(w.nextReview) {
		w.nextReview = now.Add(w.opts.Interval)
		if _, err := w.review.Pass(ctx); err != nil && ctx.Err() == nil {
			w.sayOnce("reviews", "github reviews: "+err.Error())
		} else {
			delete(w.reported, "reviews")
		}
	}
	if _, err := w.waker.Pass(ctx); err != nil && ctx.Err() == nil {
		w.sayOnce("wake", "wake: "+err.Error())
	}
	now := time.Now()
	if now.After(w.nextReap) {
		w.nextReap = now.Add(2 * time.Second)
		w.reap(ctx)
	}
	if now.After(w.nextGitHub) {
		w.nextGitHub = now.Add(10 * time.Second)
		w.github(ctx)
	}
	w.retention(ctx)
}

func (w *watcher) tip(ctx context.Context) string {
	var tip string
	w.st.View(ctx, func(sn *gitstate.Snapshot) error { tip = sn.Commit(); return nil })
	return tip
}

// sync syncs with each remote that is due: every --interval, or (at most
// every second) when the local state changed since the last sync; a
// remote that fails waits twice as long each time, up to 10 intervals.
func (w *watcher) sync(ctx context.Context) {
	if w.opts.NoSync || len(w.opts.Remotes) == 0 {
		return
	}
	now := time.Now()
	changed := w.tip(ctx) != w.lastSynced && now.Sub(w.lastChange) >= time.Second
	synced := false
	for _, r := range w.opts.Remotes {
		if !changed && now.Before(w.nextSync[r]) {
			continue
		}
		synced = true
		res, err := w.e.reg.Sync(ctx, w.st, w.origin, r, true, nil)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			b := w.backoff[r]
			b = min(max(2*b, w.opts.Interval), 10*w.opts.Interval)
			w.backoff[r], w.nextSync[r] = b, time.Now().Add(b)
			w.sayOnce("sync "+r, fmt.Sprintf("sync %s failed (next try in %s): %v", r, b.Round(time.Second), err))
			continue
		}
		w.backoff[r], w.nextSync[r] = 0, time.Now().Add(w.opts.Interval)
		delete(w.reported, "sync "+r)
		if res.Merge.Status != gitstate.MergeUpToDate || res.Sent {
			rep := syncReport{Remote: r, Merge: string(res.Merge.Status), Resolved: len(res.Merge.Report.Resolved), Conflicts: res.Conflicts, Dropped: res.Merge.Report.Dropped, Pushed: res.Sent}
			w.say("sync " + syncMessage(rep, true))
		}
	}
	if synced {
		w.lastSynced, w.lastChange = w.tip(ctx), now
	}
}

// reap calls reap when an instance of this machine died or a review ran
// past its time.
func (w *watcher) reap(ctx context.Context) {
	var due []string
	err := w.st.View(ctx, func(sn *gitstate.Snapshot) error {
		var err error
		due, err = work.ReapDue(ctx, sn, w.e.reg.ConfigKeys(), w.e.reg.Env(), tools.RepoOf(w.st), time.Now())
		return err
	})
	if err != nil || len(due) == 0 {
		return
	}
	res := w.e.reg.CallAs(ctx, w.st, w.origin, "instance_reap", []byte("{}"))
	if res.Error != nil {
		w.sayOnce("reap", fmt.Sprintf("reap failed: %s: %s", res.Error.Code, res.Error.Message))
		return
	}
	var out instance.CleanedUp
	b, _ := json.Marshal(res.Data)
	json.Unmarshal(b, &out)
	for _, id := range out.Failed {
		w.say(fmt.Sprintf("reap %s: FAILED: %s", id, out.Why[id]))
	}
	for _, id := range out.TimedOut {
		w.say(fmt.Sprintf("reap %s: TERMINATED: review timed out (review.timeout_hours)", id))
	}
	for _, it := range out.Items {
		w.say(fmt.Sprintf("cleanup %s", it.ID))
	}
}

// github replays the PENDING GitHub calls when one is due.
func (w *watcher) github(ctx context.Context) {
	n := 0
	err := w.st.View(ctx, func(sn *gitstate.Snapshot) error {
		var err error
		n, err = work.GitHubDue(sn, time.Now())
		return err
	})
	if err != nil || n == 0 {
		return
	}
	res := w.e.reg.CallAs(ctx, w.st, w.origin, "github_retry", []byte("{}"))
	if res.Error != nil {
		w.say(fmt.Sprintf("github retry: %s: %s", res.Error.Code, res.Error.Message))
		return
	}
	var out work.GitHubRetried
	b, _ := json.Marshal(res.Data)
	json.Unmarshal(b, &out)
	for _, g := range out.Calls {
		line := fmt.Sprintf("github %s %s: %s", g.ID, g.Op, g.State)
		if g.LastError != "" && g.State != forge.GitHubDone {
			line += ": " + g.LastError
		}
		w.say(line)
	}
}
