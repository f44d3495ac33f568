package gitstate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// RemoteState is a remote's state as last fetched (refs/codex/remotes/<r>/state),
// measured against the local state: what `git codex status` reports.
type RemoteState struct {
	// Remote is the remote's directory under refs/codex/remotes/: its name,
	// or url-<hash> for a URL synced directly.
	Remote string `json:"remote"`
	Commit string `json:"commit"`
	// Behind counts the fetched commits the local state lacks: a sync
	// with the remote would merge them. 0 when the local state has them all.
	Behind int `json:"behind"`
}

// RemoteStates lists the remote states fetched into this repository, sorted
// by remote. It reads refs only, and runs git (rev-list) only for a remote
// whose state differs from the local one.
func (s *Store) RemoteStates(ctx context.Context) ([]RemoteState, error) {
	names, err := s.remoteStateNames()
	if err != nil {
		return nil, err
	}
	local, haveLocal, err := gitrepo.ReadRef(s.commonDir, RefState)
	if err != nil {
		return nil, err
	}
	var out []RemoteState
	for _, r := range names {
		h, ok, err := gitrepo.ReadRef(s.commonDir, RemoteStateRef(r))
		if err != nil || !ok {
			continue // gone meanwhile, or not a ref git codex wrote
		}
		rs := RemoteState{Remote: r, Commit: h.String()}
		if haveLocal && h != local {
			// the usual case after a sync and more local calls: the
			// remote's tip is in our history, and nothing is behind
			in, err := s.inHistory(h, local)
			if err != nil {
				return nil, err
			}
			if in {
				out = append(out, rs)
				continue
			}
		}
		if !haveLocal || h != local {
			spec := h.String()
			if haveLocal {
				spec = local.String() + ".." + h.String()
			}
			var b bytes.Buffer
			if err := s.git(ctx, &b, "rev-list", "--count", spec); err != nil {
				return nil, fmt.Errorf("gitstate: count %s: %w", RemoteStateRef(r), err)
			}
			if rs.Behind, err = strconv.Atoi(strings.TrimSpace(b.String())); err != nil {
				return nil, fmt.Errorf("gitstate: count %s: %w", RemoteStateRef(r), err)
			}
		}
		out = append(out, rs)
	}
	return out, nil
}

// inHistory reports whether commit h is in tip's history without running
// git: clocks grow from every parent to its child, so the walk back from
// tip stops at commits whose clock is not above h's, and costs about the
// commits made since h.
func (s *Store) inHistory(h, tip plumbing.Hash) (bool, error) {
	target, err := s.readCommit(h)
	if err != nil {
		return false, err
	}
	bound := clockOf(target.Message)
	seen := map[plumbing.Hash]bool{tip: true}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == h {
			return true, nil
		}
		commit, err := s.readCommit(c)
		if err != nil {
			return false, err
		}
		if clockOf(commit.Message) <= bound {
			continue
		}
		for _, p := range commit.Parents() {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// remoteStateNames finds refs/codex/remotes/<r>/state, loose or packed.
func (s *Store) remoteStateNames() ([]string, error) {
	seen := map[string]bool{}
	dir := filepath.Join(s.commonDir, filepath.FromSlash(remotesPrefix))
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gitstate: list remote states: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "state")); err == nil {
				seen[e.Name()] = true
			}
		}
	}
	f, err := os.Open(filepath.Join(s.commonDir, "packed-refs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gitstate: read packed-refs: %w", err)
	}
	if f != nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			_, ref, ok := strings.Cut(sc.Text(), " ")
			if !ok || !strings.HasPrefix(ref, remotesPrefix) || !strings.HasSuffix(ref, "/state") {
				continue
			}
			if r := strings.TrimSuffix(strings.TrimPrefix(ref, remotesPrefix), "/state"); r != "" && !strings.Contains(r, "/") {
				seen[r] = true
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("gitstate: read packed-refs: %w", err)
		}
	}
	names := make([]string, 0, len(seen))
	for r := range seen {
		names = append(names, r)
	}
	sort.Strings(names)
	return names, nil
}

// Remotes lists the repository's configured git remotes, as `git remote`
// does: the name of every remote.<name>.* variable of git's configuration
// (not one starting with "/", which git warns of and skips), sorted. It
// reads the config files when they give git's answer (ReadConfigFiles), as
// a sync's check of its remote does before the fetch: a git process less
// (docs/PERFORMANCE.md, "The day-behind sync side by side on two CPUs");
// else it asks git.
func (s *Store) Remotes(ctx context.Context) ([]string, error) {
	if entries, ok := ReadConfigFiles(s.commonDir, os.Getenv); ok {
		seen := map[string]bool{}
		var names []string
		for _, e := range entries {
			if e.Section == "remote" && e.HasSubsection && !strings.HasPrefix(e.Subsection, "/") && !seen[e.Subsection] {
				seen[e.Subsection] = true
				names = append(names, e.Subsection)
			}
		}
		sort.Strings(names)
		return names, nil
	}
	var b bytes.Buffer
	if err := s.git(ctx, &b, "remote"); err != nil {
		return nil, fmt.Errorf("gitstate: list remotes: %w", err)
	}
	return strings.Fields(b.String()), nil
}
