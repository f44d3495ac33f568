package tools

import (
	"regexp"
	"strings"
)

// secretShape is one kind of credential recognised by the form of its value,
// whatever the field it arrives in: the shapes GitHub's push protection and
// similar scanners look for. docs/SECURITY.md lists them; keep the two in step.
type secretShape struct {
	kind string
	re   *regexp.Regexp
	// ok, when set, rejects matches that only look like the shape (e.g. an
	// all-letter run after "sk-" is a word, not a key).
	ok func(match string) bool
}

// secretShapes are checked in order; the first that matches names the kind.
var secretShapes = []secretShape{
	{kind: "GitHub token", re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`)},
	{kind: "GitHub fine-grained token", re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{kind: "GitLab token", re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{kind: "Anthropic API key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{kind: "OpenAI API key", re: regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), ok: hasDigit},
	{kind: "Stripe secret key", re: regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{kind: "Slack token", re: regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{kind: "Slack app token", re: regexp.MustCompile(`\bxapp-[0-9]+-[A-Za-z0-9-]{10,}`)},
	{kind: "AWS access key id", re: regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)},
	{kind: "Google API key", re: regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{35}`)},
	{kind: "npm token", re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`)},
	{kind: "private key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)},
	{kind: "bearer token", re: regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*`), ok: hasDigit},
}

// anySecret is every shape in one expression, so that a value without a
// secret (nearly all of them) is scanned once.
var anySecret = func() *regexp.Regexp {
	parts := make([]string, len(secretShapes))
	for i, s := range secretShapes {
		parts[i] = "(?:" + s.re.String() + ")"
	}
	return regexp.MustCompile(strings.Join(parts, "|"))
}()

// secretIn names the kind of the first credential found in s, or "".
func secretIn(s string) string {
	if !anySecret.MatchString(s) {
		return ""
	}
	for _, sh := range secretShapes {
		for _, m := range sh.re.FindAllString(s, -1) {
			if sh.ok == nil || sh.ok(m) {
				return sh.kind
			}
		}
	}
	return ""
}

// hasDigit tells a key ("sk-4f9aQ...") from a hyphenated phrase
// ("sk-lightweight-approach-for-the-cache"), and a bearer token from prose:
// generated credentials mix in digits, and the prefixes have none.
func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }
