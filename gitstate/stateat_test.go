package gitstate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// StateAt finds the newest state commit at or before a time, as the
// page's ?at=<time> asks; reads on the reads refs are not state commits.
func TestStateAt(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	now := base
	s, dir := openReadsLocal(t, func() time.Time { return now })
	var hashes []string
	for i := 1; i <= 3; i++ {
		now = base.Add(time.Duration(i) * time.Minute)
		c, err := s.Update(ctx, func(tx *gitstate.Tx) error {
			tx.SetMeta(meta("put"))
			return tx.Put("mail/x/1.json", rec{N: i})
		})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, c.Hash)
		now = now.Add(10 * time.Second) // a read after each write
		if _, err := s.Update(ctx, func(tx *gitstate.Tx) error { tx.SetMeta(meta("look")); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{2 * time.Minute, hashes[1]},
		{2*time.Minute + 30*time.Second, hashes[1]},
		{time.Hour, hashes[2]},
		{0, gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState+"~3")},
	} {
		got, err := s.StateAt(ctx, base.Add(tc.at))
		if err != nil || got != tc.want {
			t.Errorf("at +%s: %s %v, want %s", tc.at, got, err, tc.want)
		}
	}
	if _, err := s.StateAt(ctx, base.Add(-time.Hour)); !errors.Is(err, gitstate.ErrNotFound) {
		t.Errorf("before the first commit: %v, want ErrNotFound", err)
	}
}
