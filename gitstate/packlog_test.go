package gitstate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func packName(i int) string { return fmt.Sprintf("pack-%040x", i) }

// The log's text is read back exactly, and anything torn or foreign in it
// makes it no log at all.
func TestPackLogParse(t *testing.T) {
	names := []string{packName(1), packName(2)}
	good := packLogMagic + " ab12 7\n" + strings.Join(names, "\n") + "\nend\n"
	id, seq, got, ok := parsePackLog([]byte(good + "left over from a longer log\n"))
	if !ok || id != "ab12" || seq != 7 || !slices.Equal(got, names) {
		t.Fatalf("parse = %q %d %q %v", id, seq, got, ok)
	}
	for name, text := range map[string]string{
		"torn":          good[:len(good)-3],
		"no header":     strings.Join(names, "\n") + "\nend\n",
		"other magic":   "git-codex oldpacks ab12 7\nend\n",
		"bad seq":       packLogMagic + " ab12 x7\nend\n",
		"bad name":      packLogMagic + " ab12 7\npack-123\nend\n",
		"not a pack":    packLogMagic + " ab12 7\n" + strings.Repeat("0", 45) + "\nend\n",
		"more than seq": packLogMagic + " ab12 1\n" + strings.Join(names, "\n") + "\nend\n",
		"empty":         "",
		"zeros":         string(make([]byte, 200)),
	} {
		if _, _, _, ok := parsePackLog([]byte(text)); ok {
			t.Errorf("%s: parsed as a log: %q", name, text)
		}
	}
}

// news tells a writer exactly the packs published since its last turn, or
// nothing when it cannot know them all.
func TestPackLogNews(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newpacks")
	a, b := &packLog{path: path}, &packLog{path: path}
	defer a.close()
	defer b.close()
	turn := func(l *packLog, publish ...string) []string {
		got := l.news(0)
		l.publish(publish)
		return got
	}
	if got := turn(a, packName(1)); got != nil {
		t.Fatalf("first turn, empty log: news %q", got)
	}
	if got := turn(b, packName(2)); got != nil {
		t.Fatalf("b's first turn: news %q, want none (it never knew the list)", got)
	}
	if got := turn(a); !slices.Equal(got, []string{packName(2)}) {
		t.Fatalf("a's news %q, want b's pack", got)
	}
	if got := turn(a, packName(3)); got != nil {
		t.Fatalf("a again, nothing new: news %q", got)
	}
	for i := 4; i < 4+packLogKeep; i++ {
		turn(b, packName(i))
	}
	if got := turn(b); got != nil {
		t.Fatalf("b's own packs reported back to it: %q", got)
	}
	if got := turn(a); len(got) != packLogKeep || got[0] != packName(4) || got[len(got)-1] != packName(3+packLogKeep) {
		t.Fatalf("a's news after %d packs: %d of them (%q ...), want all", packLogKeep, len(got), got[:min(len(got), 2)])
	}
	for i := 0; i < packLogKeep+1; i++ {
		turn(b, packName(100+i))
	}
	if got := turn(a); got != nil {
		t.Fatalf("a, %d packs behind a log of %d: news %q, want none (it rescans)", packLogKeep+1, packLogKeep, got[:2])
	}
	// a torn log (a crash mid-write) is started anew under another id: a
	// reader that knew the old one takes nothing from the new one
	if err := os.WriteFile(path, []byte(packLogMagic+" ab12 9\n"+packName(1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := turn(b, packName(200)); got != nil {
		t.Fatalf("torn log: news %q", got)
	}
	if got := turn(a); got != nil {
		t.Fatalf("a, after the log was started anew: news %q", got)
	}
	if got := turn(b); !slices.Equal(got, nil) {
		t.Fatalf("b: news %q", got)
	}
	turn(b, packName(201))
	if got := turn(a); !slices.Equal(got, []string{packName(201)}) {
		t.Fatalf("a, once it knows the new log: news %q", got)
	}
}

// TestNextWriterFindsPacksWithoutRescan: a writer that finds, at its turn,
// the packs other writers wrote since its last one named in the log reads
// the tip without listing the pack directory again; without the log it
// rescans, as before.
func TestNextWriterFindsPacksWithoutRescan(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ctx := context.Background()
	open := func() *Store {
		s, err := Open(dir, Options{PackEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	var stages []string
	b.phaseHook = func(name string) { stages = append(stages, name) }
	n := 0
	put := func(s *Store) {
		t.Helper()
		n++
		put := func(tx *Tx) error {
			tx.SetMeta(Meta{Summary: "put"})
			return tx.PutRaw(fmt.Sprintf("r/%d.json", n), []byte("{}"))
		}
		var err error
		if n == 1 {
			_, err = s.Init(ctx, put)
		} else {
			_, err = s.Update(ctx, put)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	put(a)
	put(b) // b lists the directory once
	for round := 0; round < 3; round++ {
		put(a)
		put(a)
		stages = nil
		put(b)
		if slices.Contains(stages, "rescan") {
			t.Fatalf("round %d: b rescanned the pack directory although the log named a's packs: %q", round, stages)
		}
	}
	put(a)
	if err := os.Remove(filepath.Join(dir, ".git", "codex", "newpacks")); err != nil {
		t.Fatal(err)
	}
	b.writer.packs.close() // as a process that starts after the log went
	stages = nil
	put(b)
	if !slices.Contains(stages, "rescan") {
		t.Fatalf("without the log b found a's pack without a rescan: %q", stages)
	}
	// every record a and b wrote is there, as git sees it
	out, err := exec.Command("git", "-C", dir, "ls-tree", "-r", "--name-only", RefState).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(strings.Fields(string(out))); got != n {
		t.Fatalf("git lists %d records, want %d", got, n)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--full", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}
