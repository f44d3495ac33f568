package work

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/mail"
	"github.com/gitcodex/git-codex/tools/review"
)

// Wake-ups (issue 28, docs/WATCH.md): an agent learns of mail and review
// feedback by calling a tool, so `git codex watch` tells a live instance,
// in its own pane, that something arrived. What is due is derived from
// the state alone: the recipient's unread mail and the review feedback
// delivered to it, minus what its wake record says was already announced.
// The record is the only memory, so a watcher that is killed, or a second
// watcher on the same repository, or one on another clone after a sync,
// reads the same answer: nothing is lost, and a claim (written before a
// nudge is typed, under the writer lock) keeps two watchers from typing
// the same nudge.

const dirWake = "wake"

func wakePath(recipient string) string { return dirWake + "/" + recipient + ".json" }

// wakeKind: wake/<recipient>.json, one record per instance (or the humans'
// inbox) that has been woken. Mutable, merged field by field.
func wakeKind() tools.Kind {
	k := tools.RecordKind(tools.Kind{Name: "wake", Dir: dirWake, Depth: 1}, func(rel []string, name string, w *Wake) error {
		if w.Recipient != name || (name != tools.HumanInbox && tools.ValidateAgentID(name) != nil) {
			return fmt.Errorf("wake record of %q does not belong at this path", w.Recipient)
		}
		return nil
	})
	// an instance's wake record goes with it
	k.Retention = tools.RetainInstances
	k.Archived = func(data []byte) bool { return json.Valid(data) } // of an instance that ended, taken with it
	return k
}

// Outcomes of a wake-up, as its record keeps the last one.
const (
	WakeDelivered = "delivered" // typed into the pane and seen to leave its input line (or the person's command ran)
	WakeDeferred  = "deferred"  // not at its input (busy, a dialog, the rate limit): tried again on a later pass
	WakeFailed    = "failed"    // tried and not taken; Why says why; tried again on a later pass
)

// Wake is what the watchers have told one recipient. Announced holds the
// arrivals already announced: unread mail (pruned once read, so it stays
// as small as the inbox's unread part) and feedback delivered to it (at
// most review.max_iterations per coder).
type Wake struct {
	Recipient string     `json:"recipient"`
	Announced []string   `json:"announced"`
	Claim     *WakeClaim `json:"claim,omitempty" jsonschema:"a watcher about to type a nudge; live while its holder's work mark is held"`
	// Nudges are the times of the nudges of the last minute: the rate
	// limit (wake.max_per_minute) counts them, whichever watcher typed them.
	Nudges    []time.Time    `json:"nudges,omitempty"`
	Outcome   string         `json:"outcome,omitempty" jsonschema:"the last attempt: delivered, deferred or failed"`
	Why       string         `json:"why,omitempty" jsonschema:"why the last attempt was deferred or failed"`
	Items     []string       `json:"items,omitempty" jsonschema:"the arrivals the last attempt was about"`
	Delivered int            `json:"delivered" jsonschema:"nudges delivered so far"`
	UpdatedAt time.Time      `json:"updated_at"`
	UpdatedBy string         `json:"updated_by"`
	Clock     gitstate.Clock `json:"clock"`
}

// WakeClaim is a watcher's claim on a recipient's pending arrivals, made
// before it types: Mark is the work mark (gitstate's, a lock a live
// process holds) that says the claim is still being acted on.
type WakeClaim struct {
	ID     string    `json:"id"`
	Holder string    `json:"holder"`
	Mark   string    `json:"mark"`
	Items  []string  `json:"items"`
	At     time.Time `json:"at"`
}

// Arrival is one thing waiting for a recipient: a mail (task assignments,
// lock releases and review requests arrive as mail too) or a review's
// feedback.
type Arrival struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // mail or feedback
	From    string `json:"from"`
	Subject string `json:"subject"`
}

// recordSource is what wake-ups read: a snapshot or a transaction.
type recordSource interface {
	Get(path string, v any) error
	Walk(dir string, fn func(path string, data []byte) error) error
}

func walkRecords[T any](src recordSource, dir string, fn func(T)) error {
	return src.Walk(dir, func(path string, data []byte) error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		fn(v)
		return nil
	})
}

// arrivals lists what is waiting for recipient, oldest first: its unread
// mail, and (for an instance) the feedback delivered to its branch.
func arrivals(src recordSource, recipient string) ([]Arrival, error) {
	var out []Arrival
	err := walkRecords(src, mail.RecipientDir(recipient), func(m mail.Mail) {
		if !m.IsRead && m.To == recipient {
			out = append(out, Arrival{ID: m.ID, Kind: "mail", From: m.From, Subject: m.Subject})
		}
	})
	if err != nil || recipient == tools.HumanInbox {
		return out, err
	}
	err = walkRecords(src, review.DirFeedback, func(f review.Feedback) {
		if f.Coder == recipient && f.Delivery == "delivered" {
			out = append(out, Arrival{ID: f.ID, Kind: "feedback", From: f.Reviewer, Subject: f.Type})
		}
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// getWake reads a recipient's wake record (an empty one if none).
func getWake(src recordSource, recipient string) (Wake, error) {
	w := Wake{Recipient: recipient}
	err := src.Get(wakePath(recipient), &w)
	if errors.Is(err, gitstate.ErrNotFound) {
		return Wake{Recipient: recipient}, nil
	}
	return w, err
}

// unannounced are the arrivals w has not announced.
func (w Wake) unannounced(all []Arrival) []Arrival {
	var out []Arrival
	for _, a := range all {
		if !slices.Contains(w.Announced, a.ID) {
			out = append(out, a)
		}
	}
	return out
}

// recent are the nudges of the minute before now.
func (w Wake) recent(now time.Time) []time.Time {
	var out []time.Time
	for _, t := range w.Nudges {
		if now.Sub(t) < time.Minute {
			out = append(out, t)
		}
	}
	return out
}

// WakeText is the one line typed into a recipient's pane for what
// arrived: what, from whom, and which tool reads it. Several arrivals
// fold into one line.
func WakeText(items []Arrival) string {
	var mail, fb []Arrival
	for _, a := range items {
		if a.Kind == "feedback" {
			fb = append(fb, a)
		} else {
			mail = append(mail, a)
		}
	}
	var parts []string
	switch len(mail) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("new mail %s from %s (%q): read it with the mail_read tool", mail[0].ID, mail[0].From, cutRunes(mail[0].Subject, 60)))
	default:
		parts = append(parts, fmt.Sprintf("%d new mails (the latest from %s, %q): list them with the mail_list_inbox tool and read each with mail_read",
			len(mail), mail[len(mail)-1].From, cutRunes(mail[len(mail)-1].Subject, 40)))
	}
	switch len(fb) {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("review feedback %s (%s) from %s is committed on your branch as %s: read that file", fb[0].ID, fb[0].Subject, fb[0].From, review.FeedbackFile))
	default:
		parts = append(parts, fmt.Sprintf("%d review feedbacks are committed on your branch, the latest as %s: read that file", len(fb), review.FeedbackFile))
	}
	return "[git codex] " + strings.Join(parts, "; ")
}

// cutRunes shortens s to n runes on one line.
func cutRunes(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func ids2(items []Arrival) []string {
	out := make([]string, len(items))
	for i, a := range items {
		out[i] = a.ID
	}
	return out
}

// wakeKeys are the settings of wake-ups.
func wakeKeys() []tools.ConfigKey {
	return []tools.ConfigKey{
		{Name: "wake.max_per_minute", Kind: "int", Default: 2,
			Doc: "nudges `git codex watch` types into one instance's pane per minute at most (arrivals in between wait and fold into the next); 0: never wake instances"},
		{Name: "wake.human_command", Kind: "string", Default: "", Local: true,
			Doc: "a command `git codex watch` runs (sh -c) when mail arrives for the humans, e.g. notify-send \"git codex\" \"$CODEX_WAKE_TEXT\"; it gets CODEX_WAKE_TEXT, CODEX_WAKE_COUNT and CODEX_WAKE_IDS; empty: off (this machine's: git config codex.wake.humanCommand)"},
	}
}
