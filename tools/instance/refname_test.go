package instance

import (
	"os/exec"
	"testing"
)

// TestRefFormatAgreesWithGit checks CheckRefFormat against git's own
// `git check-ref-format` on the names git's rules are about.
func TestRefFormatAgreesWithGit(t *testing.T) {
	names := []string{"ok", "a-b_c", "a.b", "a..b", "a.", ".a", "a/.b", "a.lock", "a.lock/b", "x.lock.y", "a/b.lock/c",
		".lock", "a@{b", "@", "a@b", "@{", "a b", "a~", "a^1", "a:b", "a?", "a*", "a[", "a\\b", "a//b", "/a", "a/", "a\x01",
		"a\x7f", "日本", "a/b/c", "-a", "a-", "a/..", "..", "a.lock.", "work-0k3fq-x7", "a/b.", "a./b"}
	for _, n := range names {
		ref := "refs/heads/codex/" + n
		gitOK := exec.Command("git", "check-ref-format", ref).Run() == nil
		ours := CheckRefFormat(ref)
		if gitOK != (ours == nil) {
			t.Errorf("%q: git says valid=%v, CheckRefFormat says %v", ref, gitOK, ours)
		}
	}
}

// TestInstanceIDsAreRefNames is issue 29 item 16: names such as a..b
// passed the instance-id check and failed later, at branch creation (or
// a.b at the tmux session). They are refused up front.
func TestInstanceIDsAreRefNames(t *testing.T) {
	for _, id := range []string{"a..b", "x.lock", "a.", "a.b", "a.lock.b/c"} {
		if err := ValidateInstanceID(id); err == nil {
			t.Errorf("%q accepted", id)
		}
	}
	for _, id := range []string{"coder1", "work-0k3fq-x7", "a_b-c", "rev@team"} {
		if err := ValidateInstanceID(id); err != nil {
			t.Errorf("%q refused: %v", id, err)
		}
	}
}
