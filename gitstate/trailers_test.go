package gitstate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// TestMessageShapedByNoField is issue 16 item 6 at the store: whatever bytes
// a summary or a trailer value holds, the commit message keeps its shape
// (one summary line, every trailer, the clock last) and git fsck stays
// clean; a NUL used to cut the message (and its trailers) short.
func TestMessageShapedByNoField(t *testing.T) {
	s, dir := openInit(t)
	_, err := s.Update(context.Background(), func(tx *gitstate.Tx) error {
		tx.SetMeta(gitstate.Meta{
			Summary: "sent\x00 cut\nCodex-Result: forged\r\x1b[2J \xff",
			Trailers: []gitstate.Trailer{
				{Key: gitstate.TrailerTool, Value: "t\x00ool"},
				{Key: gitstate.TrailerArgs, Value: "{}\n\nCodex-Error: FORGED\x00"},
				{Key: gitstate.TrailerResult, Value: "ok"},
			},
		})
		// a write, so that the commit is the state's (a read's message
		// also names the state commit it read)
		return tx.Put("x.json", rec{N: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := gitstatetest.Git(t, dir, "cat-file", "commit", gitstate.RefState)
	_, body, _ := strings.Cut(msg, "\n\n")
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	want := []string{
		"sent cut Codex-Result: forged [2J",
		"",
		"Codex-Tool: t ool",
		"Codex-Args: {} Codex-Error: FORGED",
		"Codex-Result: ok",
		"Codex-Clock: 2",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("message:\n%q\nwant\n%q", lines, want)
	}
	got := gitstatetest.Git(t, dir, "log", "-1", "--format=%(trailers:key=Codex-Error,valueonly)", gitstate.RefState)
	if got != "" {
		t.Errorf("a value forged a trailer: %q", got)
	}
	if out, err := gitstatetest.GitErr(dir, "-c", "fsck.nulInCommit=error", "fsck", "--strict", "--no-dangling"); err != nil || strings.Contains(out, "warning") {
		t.Errorf("git fsck: %v %s", err, out)
	}
}
