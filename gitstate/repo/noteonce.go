package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// AppendNoteOnce appends text to the note of commit under ref, as `git
// notes append -F -` does, unless that note already contains marker; it
// reports whether it appended. The check and the append are one step: the
// new notes commit is built on the notes tip whose note was checked and
// the ref moves only from that tip (compare and swap), so two writers of
// the same note, whatever becomes of them (a deliverer SIGKILLed while its
// git child still runs, and the next one), leave it there once. `git notes
// append` cannot: it reads the note, then moves the ref with no expected
// old value, after a check made by another process.
func (r *Repo) AppendNoteOnce(ctx context.Context, ref, commit, text, marker string) (bool, error) {
	commit, err := r.RevParse(ctx, commit+"^{commit}")
	if err != nil {
		return false, fmt.Errorf("repo: note on %s: %w", commit, err)
	}
	// the ref's lock held by another writer (git notes, a sync merging
	// notes) or a tip that moved meanwhile: read again, as the store waits for a ref lock git holds
	deadline := time.Now().Add(5 * time.Second)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		added, err := r.appendNoteOnce(ctx, ref, commit, text, marker)
		if err == nil || !noteRaced(err) || time.Now().After(deadline) {
			return added, err
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(wait):
		}
	}
}

// noteRaced reports an update of the notes ref that lost to another
// writer: its lock was held, or the ref was not where it was read.
func noteRaced(err error) bool {
	s := err.Error()
	return strings.Contains(s, ".lock': File exists") || strings.Contains(s, "but expected") || strings.Contains(s, "reference already exists")
}

// appendNoteOnce is one attempt of AppendNoteOnce.
func (r *Repo) appendNoteOnce(ctx context.Context, ref, commit, text, marker string) (bool, error) {
	refs, err := r.gitIn(ctx, "", "", nil, "for-each-ref", "--format=%(objectname) %(refname)", ref)
	if err != nil {
		return false, err
	}
	old := "" // for-each-ref also lists the refs below ref/
	for line := range strings.SplitSeq(refs, "\n") {
		if oid, name, _ := strings.Cut(line, " "); name == ref {
			old = oid
		}
	}
	path, existing, err := r.noteAt(ctx, old, commit)
	if err != nil {
		return false, err
	}
	if strings.Contains(existing, marker) {
		return false, nil
	}
	note := stripSpace(text)
	if existing != "" && note != "" {
		note = existing + "\n" + note // git notes append's join
	} else if existing != "" {
		note = existing
	}
	blob, err := r.gitIn(ctx, "", "", strings.NewReader(note), "hash-object", "-w", "--stdin")
	if err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp("", "codex-notes-*")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	if old != "" {
		if _, err := r.gitIn(ctx, "", index, nil, "read-tree", old+"^{tree}"); err != nil {
			return false, err
		}
	}
	if _, err := r.gitIn(ctx, "", index, nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path); err != nil {
		return false, err
	}
	tree, err := r.gitIn(ctx, "", index, nil, "write-tree")
	if err != nil {
		return false, err
	}
	env := []string{"GIT_AUTHOR_NAME=" + r.committer.Name, "GIT_AUTHOR_EMAIL=" + r.committer.Email,
		"GIT_COMMITTER_NAME=" + r.committer.Name, "GIT_COMMITTER_EMAIL=" + r.committer.Email}
	args := []string{"commit-tree", tree, "-m", "Notes added by 'git notes append'"}
	if old != "" {
		args = append(args, "-p", old)
	}
	next, err := r.gitEnvIn(ctx, "", env, nil, args...)
	if err != nil {
		return false, err
	}
	// old "" is git's "must not exist yet"
	if _, err := r.gitIn(ctx, "", "", nil, "update-ref", "-m", "notes: Notes added by 'git notes append'", ref, next, old); err != nil {
		return false, err
	}
	return true, nil
}

// noteAt finds commit's note in notes commit tip ("" when there are no
// notes yet): the path it is at, or, when there is none, the path a new
// one goes to (at the fan-out the tree already has along commit's name,
// as git places it), and its text.
func (r *Repo) noteAt(ctx context.Context, tip, commit string) (path, text string, err error) {
	if tip == "" {
		return commit, "", nil
	}
	// git fans a notes tree out 2 hex digits per level as it grows; a
	// note may be at any level (a tree git did not rewrite yet)
	args := []string{"ls-tree", "-r", "-t", tip, "--"}
	for level := 0; level <= 4 && 2*level < len(commit); level++ {
		args = append(args, fanned(commit, level))
	}
	out, err := r.gitIn(ctx, "", "", nil, args...)
	if err != nil {
		return "", "", err
	}
	trees := map[string]bool{}
	blob := ""
	for line := range strings.SplitSeq(out, "\n") {
		meta, p, ok := strings.Cut(line, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			switch f[1] {
			case "tree":
				trees[p] = true
			case "blob":
				path, blob = p, f[2]
			}
		}
	}
	if blob != "" {
		text, err := r.gitIn(ctx, "", "", nil, "cat-file", "blob", blob)
		if err != nil {
			return "", "", err
		}
		return path, text + "\n", nil // git notes show's text, as it ends
	}
	level := 0
	for level < 4 && trees[strings.TrimSuffix(fanned(commit, level+1)[:3*(level+1)], "/")] {
		level++
	}
	return fanned(commit, level), "", nil
}

// fanned is commit's note path at fan-out level: ab/cd/ef... for 2.
func fanned(commit string, level int) string {
	var b strings.Builder
	for i := range level {
		b.WriteString(commit[2*i : 2*i+2])
		b.WriteByte('/')
	}
	b.WriteString(commit[2*level:])
	return b.String()
}

// stripSpace cleans a note's text as git notes does (git stripspace):
// trailing whitespace off every line, runs of blank lines made one, none
// at the start or end, and a final newline ("" stays "").
func stripSpace(text string) string {
	var b strings.Builder
	blank := false
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, " \t\r\f\v")
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
