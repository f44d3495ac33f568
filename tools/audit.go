package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gitcodex/git-codex/gitstate"
)

// auditRecord is the commit message of every commit git codex writes for
// a caller: a call's own (Registry.CallAs), its outcomes (Followup.Record),
// its undo report and escalation, init, restore and sync, the MCP server's
// refusals and start, and the watcher's wake records. It is the only place
// an audit record is built, so every entry point says who called what,
// how the caller proved it (Codex-Auth) and with which arguments, in the
// same trailers. c carries all of it: the tool, the caller (its type once
// resolved), the redacted arguments, the commit it follows, its summary
// and target. e is nil on success; extra trailers go last (an undo's
// errors).
func auditRecord(c *Call, e *Error, extra ...gitstate.Trailer) gitstate.Meta {
	// The tool's name and the caller's id are the caller's bytes too (an
	// unknown tool, an unregistered id): never echo a credential.
	tool, actor := redactName(c.tool), redactName(c.Caller.ID)
	m := gitstate.Meta{Author: AuthorOf(actor)}
	add := func(k, v string) {
		if v != "" {
			m.Trailers = append(m.Trailers, gitstate.Trailer{Key: k, Value: v})
		}
	}
	add(gitstate.TrailerTool, tool)
	add(gitstate.TrailerActor, actor)
	add(gitstate.TrailerActorType, string(c.Caller.Type))
	if e == nil {
		add(gitstate.TrailerResult, "ok")
		m.Summary = tool + ": " + actor
		if c.summary != "" {
			m.Summary = tool + ": " + c.summary
		}
	} else {
		add(gitstate.TrailerError, string(e.Code))
		add(gitstate.TrailerMessage, RedactMessage(e.Message))
		m.Summary = fmt.Sprintf("%s: %s refused: %s", tool, actor, e.Code)
	}
	add(gitstate.TrailerTarget, c.target)
	add(gitstate.TrailerFollows, c.follows)
	add(gitstate.TrailerAuth, c.auth)
	args := c.args
	if c.auditArgs != "" {
		args = c.auditArgs
	}
	if args == "" {
		args = "{}"
	}
	add(gitstate.TrailerArgs, args)
	m.Trailers = append(m.Trailers, extra...)
	return m
}

// maxAuditMessage is how much of an error's message the audit keeps.
const maxAuditMessage = 300

// RedactMessage is an error message fit for a trailer: one line, every
// word shaped like a credential replaced, cut to maxAuditMessage.
func RedactMessage(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if kind := SecretIn(w); kind != "" {
			words[i] = "[redacted: " + kind + "]"
		}
	}
	return Truncate(RedactSecrets(strings.Join(words, " ")), maxAuditMessage)
}

// redactName replaces a name shaped like a credential.
func redactName(s string) string {
	if kind := SecretIn(s); kind != "" {
		return "[redacted: " + kind + "]"
	}
	return s
}

// AuthorOf attributes a commit to its caller: a person by their e-mail, an
// agent by its id.
func AuthorOf(id string) gitstate.Signature {
	id = strings.Map(func(r rune) rune { // never let an id break the author line
		if r == '<' || r == '>' || r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, id)
	if email, ok := strings.CutPrefix(id, HumanPrefix); ok {
		return gitstate.Signature{Name: id, Email: email}
	}
	return gitstate.Signature{Name: id, Email: id + "@agents.git-codex.invalid"}
}

// secretKey matches argument names whose values must never enter a ref,
// whatever they hold; values of any name are also checked for the shapes of
// credentials (secretIn), so a token under "note" is redacted too. An
// "env" (a delegated query's MCP server environment) is where keys live.
var secretKey = LazyRegexp(`(?i)(psk|token|secret|password|passwd|api[_-]?key|authorization|credential|private[_-]?key|^env$)`)

// secretKeyWords are secretKey's words, for names in ASCII (nearly all):
// matching them needs no compiled expression, which cost every CLI write
// a few hundred microseconds.
var secretKeyWords = []string{"psk", "token", "secret", "password", "passwd", "apikey", "api_key", "api-key",
	"authorization", "credential", "privatekey", "private_key", "private-key"}

// isSecretKey reports whether an argument's name says its value is secret
// (secretKey; names with other than ASCII letters go through it, for its
// Unicode case folding).
func isSecretKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return secretKey.MatchString(k)
		}
	}
	k = asciiLower(k)
	if k == "env" {
		return true
	}
	for _, w := range secretKeyWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// maxAuditString is how much of one string argument (or key) the trailer
// keeps; the full text is in the record the call wrote. maxAuditArgs caps the
// whole trailer, however many arguments a call sends.
const (
	maxAuditString = 200
	maxAuditArgs   = 4096
)

// redactArgs renders arguments for the Codex-Args trailer: compact JSON with
// secret-looking fields and every string shaped like a credential replaced
// (at any depth, keys too), and long strings cut. Arguments that are not
// valid JSON are not echoed at all (they may hold a secret). A call refused
// with SECRET_DETECTED is recorded this way too: the value is nowhere.
func redactArgs(args json.RawMessage) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return "{}"
	}
	var v map[string]any
	if err := json.Unmarshal(args, &v); err != nil {
		// not an object (or not JSON): its content may be a secret.
		return fmt.Sprintf("(not a JSON object, %d bytes)", len(args))
	}
	b, err := json.Marshal(redact(v))
	if err != nil {
		return fmt.Sprintf("(unencodable, %d bytes)", len(args))
	}
	return Truncate(string(b), maxAuditArgs)
}

func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			key := Truncate(RedactSecrets(k), maxAuditString)
			if kind := SecretIn(k); kind != "" {
				key = fmt.Sprintf("[redacted %s #%d]", kind, len(out))
			}
			if isSecretKey(k) {
				out[key] = "[redacted]"
				continue
			}
			out[key] = redact(val)
		}
		return out
	case []any:
		for i := range x {
			x[i] = redact(x[i])
		}
		return x
	case string:
		if kind := SecretIn(x); kind != "" {
			return "[redacted: " + kind + "]"
		}
		return Truncate(RedactSecrets(x), maxAuditString)
	}
	return v
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(+%d bytes)", s[:cut], len(s)-cut)
}
