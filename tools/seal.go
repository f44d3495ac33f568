package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// Every byte that reaches a ref is scanned for credentials, whoever produced
// it: the caller's arguments are checked where they enter (checkValues
// refuses them), but a record also holds what git codex read elsewhere (a
// delegated agent's answer, GitHub's error message, an agent CLI's stderr).
// So every transaction the tools write goes through update, which seals it
// before it commits: each record, each file of a side commit and the commit
// message has every credential replaced with "[redacted: <kind>]", the
// commit says so (Codex-Redacted) and the call's result warns of it.
// TestEveryWriteIsSealed keeps the tools from writing any other way.

// Redaction is a credential taken out of what a transaction was about to
// commit.
type Redaction struct {
	Path string `json:"path"` // the record (or "commit message"); ref:path for a side commit's file
	Kind string `json:"kind"`
}

// String says what was redacted, never the value.
func (r Redaction) String() string { return fmt.Sprintf("a %s in %s was redacted", r.Kind, r.Path) }

// update runs fn as one transaction on st (the first one, with init) and
// seals what it writes; it is the only way the tools write the state.
func update(ctx context.Context, st *gitstate.Store, init bool, fn func(tx *gitstate.Tx) error) (gitstate.Commit, []Redaction, error) {
	var reds []Redaction
	sealed := func(tx *gitstate.Tx) error {
		reds = nil // a transaction retried after a lost race starts afresh
		if err := fn(tx); err != nil {
			return err
		}
		var err error
		reds, err = seal(tx)
		return err
	}
	var c gitstate.Commit
	var err error
	if init {
		c, err = st.Init(ctx, sealed)
	} else {
		c, err = st.Update(ctx, sealed)
	}
	if err != nil {
		return c, nil, err
	}
	return c, reds, nil
}

// seal redacts every credential in the transaction's writes and its commit
// message, and records what it took out in a Codex-Redacted trailer.
func seal(tx *gitstate.Tx) ([]Redaction, error) {
	var reds []Redaction
	err := tx.RewriteWrites(func(ref, path string, data []byte) ([]byte, error) {
		out, kinds := redactRecord(data)
		where := path
		if ref != gitstate.RefState {
			where = ref + ":" + path
		}
		for _, k := range kinds {
			reds = append(reds, Redaction{Path: where, Kind: k})
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	m, ok := tx.Meta()
	if !ok {
		return reds, nil // the store refuses a commit without one
	}
	m, more := sealMeta(m, reds...)
	tx.SetMeta(m)
	return dedupeRedactions(append(reds, more...)), nil
}

// sealMeta redacts every credential in a commit's summary and trailers,
// and adds the Codex-Redacted trailer naming those and reds (what the
// transaction's records lost), if any.
func sealMeta(m gitstate.Meta, reds ...Redaction) (gitstate.Meta, []Redaction) {
	var kinds []string
	m.Summary, kinds = redactText(m.Summary)
	trailers := make([]gitstate.Trailer, len(m.Trailers), len(m.Trailers)+1)
	for i, t := range m.Trailers {
		var k []string
		t.Value, k = redactText(t.Value)
		trailers[i] = t
		kinds = append(kinds, k...)
	}
	var mine []Redaction
	for _, k := range kinds {
		mine = append(mine, Redaction{Path: "commit message", Kind: k})
	}
	if all := append(append([]Redaction{}, reds...), mine...); len(all) > 0 {
		trailers = append(trailers, gitstate.Trailer{Key: gitstate.TrailerRedacted, Value: redactionsTrailer(all)})
	}
	m.Trailers = trailers
	return m, mine
}

// redactionsTrailer is the Codex-Redacted value: kinds and where, never
// the values.
func redactionsTrailer(reds []Redaction) string {
	reds = dedupeRedactions(reds)
	parts := make([]string, len(reds))
	for i, r := range reds {
		parts[i] = r.Kind + " in " + r.Path
	}
	return Truncate(strings.Join(parts, "; "), maxAuditMessage)
}

func dedupeRedactions(reds []Redaction) []Redaction {
	seen := map[Redaction]bool{}
	out := reds[:0:0]
	for _, r := range reds {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// redactRecord redacts every credential in a record: in each string of a
// JSON document (the text as decoded, so an escape cannot hide one; each
// string changed is written back as JSON, the rest byte for byte), or in
// the whole text of anything else. It returns data itself when nothing was
// found.
func redactRecord(data []byte) ([]byte, []string) {
	if !mayHoldSecret(string(data)) && !bytes.Contains(data, []byte(`\u`)) {
		return data, nil // nothing that could start a credential, escaped or not
	}
	if !json.Valid(data) {
		out, kinds := redactText(string(data))
		if kinds == nil {
			return data, nil
		}
		return []byte(out), kinds
	}
	var out []byte
	var kinds []string
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		// a string token: find its end (valid JSON, so every quote outside
		// a string opens one)
		j := i + 1
		for ; j < len(data) && data[j] != '"'; j++ {
			if data[j] == '\\' {
				j++
			}
		}
		tok := data[i : j+1]
		var s string
		if json.Unmarshal(tok, &s) == nil {
			if red, k := redactText(s); k != nil {
				enc, _ := json.Marshal(red)
				out = append(append(out, data[last:i]...), enc...)
				last = j + 1
				kinds = append(kinds, k...)
			}
		}
		i = j
	}
	if kinds == nil {
		return data, nil
	}
	return append(out, data[last:]...), kinds
}

// warnings turns redactions into the result's warnings.
func redactionWarnings(reds []Redaction) []string {
	var out []string
	for _, r := range dedupeRedactions(reds) {
		out = append(out, r.String()+": credentials never enter the state (it is pushed and readable by anyone who can read the repository)")
	}
	return out
}
