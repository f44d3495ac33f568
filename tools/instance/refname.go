package instance

import (
	"fmt"
	"strings"

	"github.com/gitcodex/git-codex/tmux"
	"github.com/gitcodex/git-codex/tools"
)

// CheckRefFormat applies git's rules for a ref name (git-check-ref-format(1),
// as `git check-ref-format` applies them to a full name such as
// refs/heads/x): no component starts with "." or ends with ".lock"; no "..";
// no control character, space, "~", "^", ":", "?", "*", "[" or "\"; it
// neither starts nor ends with "/" nor holds "//"; it does not end with ".";
// no "@{"; it is not "@". It returns the rule broken, or nil.
func CheckRefFormat(ref string) error {
	switch {
	case ref == "" || ref == "@":
		return fmt.Errorf("%q is not a name", ref)
	case strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") || strings.Contains(ref, "//"):
		return fmt.Errorf("a name may not start or end with / nor hold //")
	case strings.HasSuffix(ref, "."):
		return fmt.Errorf("a name may not end with a dot")
	case strings.Contains(ref, ".."):
		return fmt.Errorf("a name may not hold two dots in a row (..)")
	case strings.Contains(ref, "@{"):
		return fmt.Errorf("a name may not hold @{")
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return fmt.Errorf("a name may not hold %q", r)
		}
	}
	for _, part := range strings.Split(ref, "/") {
		if strings.HasPrefix(part, ".") {
			return fmt.Errorf("no part of a name may start with a dot")
		}
		if strings.HasSuffix(part, ".lock") {
			return fmt.Errorf("no part of a name may end with .lock")
		}
	}
	return nil
}

// ValidateInstanceID checks the id of an instance git codex is about to
// make, before anything is recorded: an agent id (ValidateAgentID) whose
// branch (codex/<id>) is a ref name git accepts and whose tmux session
// (codex-<id>) a name tmux keeps as given. "a..b" and "x.lock" pass the
// agent-id check but no branch can have them; "a.b" no tmux session.
func ValidateInstanceID(id string) error {
	if err := tools.ValidateAgentID(id); err != nil {
		return err
	}
	if err := CheckRefFormat("refs/heads/" + BranchName(id)); err != nil {
		return tools.Errorf(tools.InvalidInput, "invalid instance id %q: its branch %s is not a ref name git accepts (%v); use letters, digits and -_", id, BranchName(id), err).With("id", id).With("field", "name")
	}
	if err := tmux.CheckName(SessionName(id)); err != nil {
		return tools.Errorf(tools.InvalidInput, "invalid instance id %q: its tmux session %s cannot be named so (tmux forbids '.' and ':'); use letters, digits and -_", id, SessionName(id)).With("id", id).With("field", "name")
	}
	return nil
}
