package tools

import (
	"sort"
	"strings"
	"sync"
)

// secretShape is one kind of credential recognised by the form of its value,
// whatever the field it arrives in: the shapes GitHub's push protection and
// similar scanners look for. docs/SECURITY.md lists them; keep the two in step.
//
// A value is searched for the shape's markers (fixed prefixes) and the
// pattern is matched only where one starts, anchored: scanning a 64 KiB
// body with one unanchored expression per shape took tens of milliseconds.
type secretShape struct {
	kind    string
	markers []string // where a match can start; searched case-blind if fold
	fold    bool
	re      *lazyRE // anchored at the marker; compiled when a marker is first found
	// word: the match must not continue a word (a letter, digit or '_'
	// just before it): "risk-..." holds no "sk-" key.
	word bool
	// ok, when set, rejects matches that only look like the shape.
	ok func(match string) bool
	// issued: a credential git codex itself issues (agent, session and
	// lock tokens). A field that carries one to the tool that checks it
	// (`text:"credential"`) may hold it; nothing else may.
	issued bool
}

// secretWindow is how far past a marker a match is looked for; every shape
// is recognisable within it.
const secretWindow = 256

// secretShapes' patterns are compiled when one of their markers is first
// found: compiling all of them, at package init or at the first check,
// cost every CLI write ~1 ms (perf), though few values hold a marker.
var secretShapes = sync.OnceValue(func() []secretShape {
	return []secretShape{
		{kind: "GitHub token", markers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: LazyRegexp(`^gh[pousr]_[A-Za-z0-9]{30,}`), word: true},
		{kind: "GitHub fine-grained token", markers: []string{"github_pat_"}, re: LazyRegexp(`^github_pat_[A-Za-z0-9_]{22,}`), word: true},
		{kind: "GitLab token", markers: []string{"glpat-"}, re: LazyRegexp(`^glpat-[A-Za-z0-9_-]{20,}`), word: true},
		{kind: "Anthropic API key", markers: []string{"sk-ant-"}, re: LazyRegexp(`^sk-ant-[A-Za-z0-9_-]{20,}`), word: true},
		{kind: "OpenAI API key", markers: []string{"sk-"}, re: LazyRegexp(`^sk-[A-Za-z0-9_-]{20,}`), word: true, ok: hasDigit},
		{kind: "Stripe secret key", markers: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, re: LazyRegexp(`^[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), word: true},
		{kind: "Slack token", markers: []string{"xox"}, re: LazyRegexp(`^xox[abprs]-[A-Za-z0-9-]{10,}`), word: true},
		{kind: "Slack app token", markers: []string{"xapp-"}, re: LazyRegexp(`^xapp-[0-9]+-[A-Za-z0-9-]{10,}`), word: true},
		{kind: "AWS access key id", markers: []string{"AKIA", "ASIA"}, re: LazyRegexp(`^(?:AKIA|ASIA)[A-Z0-9]{16}(?:[^A-Za-z0-9_]|$)`), word: true},
		{kind: "Google API key", markers: []string{"AIza"}, re: LazyRegexp(`^AIza[A-Za-z0-9_-]{35}`), word: true},
		{kind: "npm token", markers: []string{"npm_"}, re: LazyRegexp(`^npm_[A-Za-z0-9]{36}`), word: true},
		{kind: "private key", markers: []string{"-----BEGIN"}, re: LazyRegexp(`^-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)},
		{kind: "bearer token", markers: []string{"bearer"}, fold: true, re: LazyRegexp(`^(?i)bearer\s+[A-Za-z0-9._~+/-]{16,}=*`), word: true, ok: hasDigit},
		// git codex's own: whoever holds one acts as that agent, or that
		// cycle role, or holds that lock. Not word-bound: 64 hex digits
		// after the prefix are a token wherever they are glued.
		{kind: "git codex agent token", markers: []string{PrefixAgentToken}, re: LazyRegexp(`^ctok_[0-9a-f]{64}`), issued: true},
		{kind: "git codex session token", markers: []string{PrefixSessionToken}, re: LazyRegexp(`^sess_[0-9a-f]{64}`), issued: true},
		{kind: "git codex lock token", markers: []string{PrefixLockToken}, re: LazyRegexp(`^lock_[0-9a-f]{64}`), issued: true},
	}
})

// SecretIn names the kind of the first credential found in s (in the order
// of secretShapes), or "".
func SecretIn(s string) string { return findSecret(s, false) }

// findSecret is secretIn; with allowIssued, credentials git codex issued
// pass (a field that carries one to the tool that checks it).
func findSecret(s string, allowIssued bool) string {
	var lower string // s with ASCII letters lowered (same length), if needed
	for _, sh := range secretShapes() {
		if allowIssued && sh.issued {
			continue
		}
		hay := s
		if sh.fold {
			if lower == "" {
				lower = asciiLower(s)
			}
			hay = lower
		}
		for _, m := range sh.markers {
			for from := 0; ; {
				i := strings.Index(hay[from:], m)
				if i < 0 {
					break
				}
				i += from
				from = i + len(m)
				if match := sh.matchAt(s, i); match != "" {
					return sh.kind
				}
			}
		}
	}
	return ""
}

// matchAt is the credential of this shape that starts at s[i] (where one of
// its markers is), or "".
func (sh secretShape) matchAt(s string, i int) string {
	if sh.word && i > 0 && isWordByte(s[i-1]) {
		return ""
	}
	end := min(len(s), i+secretWindow)
	if match := sh.re.FindString(s[i:end]); match != "" && (sh.ok == nil || sh.ok(match)) {
		return match
	}
	return ""
}

// secretSpan is one credential found in a text: s[start:end], of kind.
type secretSpan struct {
	start, end int
	kind       string
}

// secretSpans finds every credential in s, in order, overlaps merged
// (the first shape's kind names a merged span).
func secretSpans(s string) []secretSpan {
	if !mayHoldSecret(s) {
		return nil
	}
	var spans []secretSpan
	var lower string
	for _, sh := range secretShapes() {
		hay := s
		if sh.fold {
			if lower == "" {
				lower = asciiLower(s)
			}
			hay = lower
		}
		for _, m := range sh.markers {
			for from := 0; ; {
				i := strings.Index(hay[from:], m)
				if i < 0 {
					break
				}
				i += from
				from = i + len(m)
				if match := sh.matchAt(s, i); match != "" {
					spans = append(spans, secretSpan{i, i + len(match), sh.kind})
					from = i + len(match)
				}
			}
		}
	}
	if len(spans) < 2 {
		return spans
	}
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// mayHoldSecret reports whether any shape's marker occurs in s at all
// (word boundaries and the pattern aside): nearly every text has none, and
// then nothing more is looked at.
func mayHoldSecret(s string) bool {
	var lower string
	for _, sh := range secretShapes() {
		hay := s
		if sh.fold {
			if lower == "" {
				lower = asciiLower(s)
			}
			hay = lower
		}
		for _, m := range sh.markers {
			if strings.Contains(hay, m) {
				return true
			}
		}
	}
	return false
}

// redactText replaces every credential in s with "[redacted: <kind>]" and
// returns the kinds it replaced (nil: s is returned as it was).
func redactText(s string) (string, []string) {
	spans := secretSpans(s)
	if len(spans) == 0 {
		return s, nil
	}
	var b strings.Builder
	kinds := make([]string, 0, len(spans))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString("[redacted: " + sp.kind + "]")
		kinds = append(kinds, sp.kind)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), kinds
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// asciiLower lowers ASCII letters only, so byte offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// hasDigit tells a key ("sk-4f9aQ...") from a hyphenated phrase
// ("sk-lightweight-approach-for-the-cache"), and a bearer token from prose:
// generated credentials mix in digits, and the prefixes have none.
func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }
