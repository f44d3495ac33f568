package tools

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// Origin is what an adapter knows about the process a call comes from,
// fixed when the CLI runs or the MCP server starts: who it says it is, the
// agent credential it presents, whether an agent's identity is in its
// environment, and where this machine keeps its local secrets. Nothing in
// it ever enters the state.
type Origin struct {
	// ID is the caller: --as / CODEX_INSTANCE, else human:<git user.email>.
	ID string
	// Token is the agent credential presented (CODEX_TOKEN or --token).
	Token string
	// AgentEnv is true when CODEX_INSTANCE or CODEX_TOKEN is set in the
	// environment: the process runs as, or next to, an agent.
	AgentEnv bool
	// PSK returns a cycle role's pre-shared key from this machine (local
	// git config codex.role.<role>.psk, or CODEX_PSK_<ROLE>); "" when none.
	PSK func(role string) string
}

// psk is the role's pre-shared key, "" when the origin knows none.
func (o Origin) psk(role string) string {
	if o.PSK == nil {
		return ""
	}
	return o.PSK(role)
}

// Secret prefixes: every credential git codex issues starts with one, so
// that a secret is recognised wherever it turns up (argument redaction,
// handoff payloads), whatever the key that carries it.
const (
	PrefixAgentToken   = "ctok_"
	PrefixSessionToken = "sess_"
	PrefixLockToken    = "lock_"
)

// NewSecret returns a fresh credential with the given prefix. It is shown
// to its owner once; the state keeps only hashSecret of it.
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather)
	return prefix + hex.EncodeToString(b)
}

// HashSecret is what the state stores of a credential: its SHA-256, hex.
// Credentials are 256 random bits, so the hash gives nothing away to anyone
// who reads the refs.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// MatchesHash reports whether secret hashes to want, in constant time.
func MatchesHash(secret, want string) bool {
	if secret == "" || want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(want)) == 1
}

// RedactSecrets replaces every credential inside s (secretShapes: those
// git codex issued and every other shape it knows).
func RedactSecrets(s string) string {
	out, _ := redactText(s)
	return out
}
