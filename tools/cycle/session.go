package cycle

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/lock"
)

// dirSessions holds the cycle sessions: sessions/<x>/<y>/<key>.json.
const dirSessions = "sessions"

// Session is a role's session (seed 001's session.open): whoever holds its
// token acts as the role in cycles. The state keeps only the token's hash;
// the record is filed under the hash's first 24 hex digits, so a token
// finds its session in one lookup. Mutable: LastSeen moves with each use.
type Session struct {
	ID        string         `json:"id" jsonschema:"the session's id: the first 24 hex digits of its token's hash"`
	Role      string         `json:"role"`
	Feature   string         `json:"feature,omitempty" jsonschema:"the feature the session was opened for; empty: any"`
	TokenHash string         `json:"token_hash"`
	CreatedBy string         `json:"created_by" jsonschema:"the caller that opened it"`
	CreatedAt time.Time      `json:"created_at"`
	LastSeen  time.Time      `json:"last_seen"`
	Clock     gitstate.Clock `json:"clock"`
}

// sessionIDPattern is the shape of session ids.
var sessionIDPattern = tools.LazyRegexp(`^[0-9a-f]{24}$`)

func sessionPath(id string) string {
	return dirSessions + "/" + gitstate.Fanout(id) + "/" + id + ".json"
}

// defaultSessionTTLHours is how long a session may go unused: a week, so a
// role's session outlives a weekend but not a forgotten laptop.
const defaultSessionTTLHours = 7 * 24

// lookupSession finds the session of a token and notes that it was seen:
// INVALID_SESSION when the token is unknown, or its session went unused
// for longer than cycle.session_ttl_hours.
func lookupSession(c *tools.Call, token string) (Session, error) {
	hash := tools.HashSecret(token)
	id := hash[:24]
	var s Session
	err := c.Tx.Get(sessionPath(id), &s)
	if errors.Is(err, gitstate.ErrNotFound) || (err == nil && !tools.MatchesHash(token, s.TokenHash)) || token == "" {
		return Session{}, tools.Errorf(tools.InvalidSession, "unknown session token; open a session with `git codex session open <role>`")
	}
	if err != nil {
		return Session{}, err
	}
	ttl := time.Duration(c.Config.IntValue("cycle.session_ttl_hours")) * time.Hour
	if c.Tx.Now().Sub(s.LastSeen) > ttl {
		return Session{}, tools.Errorf(tools.InvalidSession, "the %s session expired: unused since %s (cycle.session_ttl_hours); open a new one with `git codex session open %s`",
			s.Role, s.LastSeen.Format(time.RFC3339), s.Role).With("role", s.Role).With("expired", true)
	}
	s.LastSeen, s.Clock = c.Tx.Now(), c.Tx.Clock()
	return s, c.Tx.Put(sessionPath(id), s)
}

// checkRoleCredential accepts the role's PSK, or, without one, the agent a
// running cycle bound to the role, when it proved who it is (its valid
// credential).
func checkRoleCredential(c *tools.Call, in SessionOpenIn) error {
	if in.PSK == "" {
		if c.Authenticated() && boundTo(c, in.Role, in.Feature) {
			return nil
		}
		return tools.Errorf(tools.AuthFailed, "session_open as %s needs the role's psk (or a call by the agent bound to %s at cycle_start, with its credential)", in.Role, in.Role).With("role", in.Role)
	}
	want := c.RolePSK(in.Role)
	if want == "" {
		return tools.Errorf(tools.ConfigInvalid, "no pre-shared key for role %s on this machine; set it with `git config codex.role.%s.psk <secret>` (or CODEX_PSK_%s)", in.Role, in.Role, envRole(in.Role)).With("role", in.Role)
	}
	if subtle.ConstantTimeCompare([]byte(in.PSK), []byte(want)) != 1 {
		return tools.Errorf(tools.AuthFailed, "invalid role credentials").With("role", in.Role)
	}
	return nil
}

// boundTo reports whether a running cycle (of feature, or any) binds the
// caller to role.
func boundTo(c *tools.Call, role, feature string) bool {
	features := []string{feature}
	if feature == "" {
		features, _ = activeFeatures(c.Tx)
	}
	for _, f := range features {
		if ac, ok, err := getCycle(c.Tx, f); err == nil && ok && ac.cycle.Bind[role] == c.Caller.ID {
			return true
		}
	}
	return false
}

// envRole is a role's name as it appears in CODEX_PSK_<ROLE>.
func envRole(role string) string {
	b := []byte(role)
	for i, ch := range b {
		switch {
		case ch >= 'a' && ch <= 'z':
			b[i] = ch - 'a' + 'A'
		case ch == '-':
			b[i] = '_'
		}
	}
	return string(b)
}

// EnvPSKName is the environment variable that holds a role's PSK.
func EnvPSKName(role string) string { return "CODEX_PSK_" + envRole(role) }

// sessionKind: sessions/<x>/<y>/<id>.json, the id the first 24 hex digits
// of the token's hash (its name and its fan-out), the role a name.
func sessionKind() tools.Kind {
	k := tools.Kind{Name: "session", Dir: dirSessions, Depth: 3, Fanout: 2}
	return tools.RecordKind(k, func(rel []string, name string, s *Session) error {
		if s.ID != name || !sessionIDPattern.MatchString(s.ID) || !tools.FannedOut(rel, s.ID) ||
			len(s.TokenHash) != 64 || s.TokenHash[:24] != s.ID {
			return fmt.Errorf("session record %q does not belong at this path", s.ID)
		}
		if !lock.NamePattern.MatchString(s.Role) || (s.Feature != "" && lock.ValidFeature(s.Feature) != nil) {
			return fmt.Errorf("session record %q names role %q, feature %q", s.ID, s.Role, s.Feature)
		}
		return nil
	})
}
