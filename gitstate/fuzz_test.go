package gitstate_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// words is what flattening a line must preserve: the whitespace-separated
// words, with control characters (\r and \n among them) counted as
// whitespace and bytes that are not UTF-8 dropped.
func words(s string) []string {
	return strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "")))
}

// plain reports text that must come back exactly: valid UTF-8 without
// control characters.
func plain(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// validTrailerKey is a key a trailer line can carry: non-empty, plain, no
// whitespace, no ": " (which ends the key), and not the store's own clock.
func validTrailerKey(k string) bool {
	if k == "" || k == gitstate.TrailerClock || strings.Contains(k, ": ") || !plain(k) {
		return false
	}
	return strings.IndexFunc(k, unicode.IsSpace) < 0
}

// FuzzMessageRoundTrip renders a Meta as a commit message and parses it
// back: one summary line, the trailers in order with their keys intact, the
// values on one line with their words preserved (and exactly preserved when
// they had no line break), and the clock last.
func FuzzMessageRoundTrip(f *testing.F) {
	f.Add("request_review by work-7f3a", "Codex-Tool", "request_review", "Codex-Args", `{"a":1}`, uint64(1842))
	f.Add("multi\nline\r\nsummary", "Codex-Error", "REVIEW_LIMIT_EXCEEDED", "Codex-Args", "{\n  \"x\": \"y\"\n}", uint64(0))
	f.Add("", "K", "", "K2", "  leading and trailing  ", uint64(1<<63))
	f.Add("Codex-Tool: fake", "Codex-Target", "a: b: c", "X:Y", "v\n\nCodex-Clock: 99", uint64(7))
	f.Add("  ", "Codex-Result", "ok\r", "Codex-Actor", "\n\n\n", uint64(3))
	f.Add("summary\n\nCodex-Clock: 5", "A", "x\u2028y\u0085z", "B", "tab\there", uint64(12))
	f.Add("\x00nul", "Codex-Clock", "1", "K", "\x00", uint64(2))
	f.Fuzz(func(t *testing.T, summary, k1, v1, k2, v2 string, clock uint64) {
		var trailers []gitstate.Trailer
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}} {
			if validTrailerKey(kv[0]) {
				trailers = append(trailers, gitstate.Trailer{Key: kv[0], Value: kv[1]})
			}
		}
		m := gitstate.Meta{Summary: summary, Trailers: trailers}
		msg := gitstate.FormatMessage(m, gitstate.Clock(clock))
		got := gitstate.ParseMessage(msg)

		if strings.ContainsAny(got.Summary, "\r\n") {
			t.Fatalf("summary %q not on one line", got.Summary)
		}
		if plain(summary) && got.Summary != summary {
			t.Fatalf("summary %q came back %q", summary, got.Summary)
		}
		if w, g := words(summary), words(got.Summary); strings.Join(w, " ") != strings.Join(g, " ") {
			t.Fatalf("summary words %q came back %q", w, g)
		}
		if len(got.Trailers) != len(trailers)+1 {
			t.Fatalf("%d trailers came back as %d:\n%s\n%q", len(trailers), len(got.Trailers), msg, got.Trailers)
		}
		for i, tr := range trailers {
			g := got.Trailers[i]
			if g.Key != tr.Key {
				t.Fatalf("trailer %d key %q came back %q\n%s", i, tr.Key, g.Key, msg)
			}
			if strings.ContainsAny(g.Value, "\r\n") {
				t.Fatalf("trailer %s value %q not on one line", g.Key, g.Value)
			}
			if plain(tr.Value) && g.Value != tr.Value {
				t.Fatalf("trailer %s value %q came back %q", tr.Key, tr.Value, g.Value)
			}
			if w, gw := words(tr.Value), words(g.Value); strings.Join(w, " ") != strings.Join(gw, " ") {
				t.Fatalf("trailer %s words %q came back %q", tr.Key, w, gw)
			}
			if indexKey(trailers, tr.Key) == i && got.Get(tr.Key) != g.Value {
				t.Fatalf("Get(%q) = %q, want %q", tr.Key, got.Get(tr.Key), g.Value)
			}
		}
		last := got.Trailers[len(got.Trailers)-1]
		if last.Key != gitstate.TrailerClock || last.Value != strconv.FormatUint(clock, 10) {
			t.Fatalf("last trailer = %+v, want clock %d", last, clock)
		}
		if c := gitstate.ClockOf(msg); c != gitstate.Clock(clock) {
			t.Fatalf("ClockOf = %d, want %d", c, clock)
		}
		if !strings.HasSuffix(msg, "\n") || strings.Count(msg, "\n\n") != 1 {
			t.Fatalf("message is not summary, blank line, trailers:\n%q", msg)
		}
		if strings.ContainsRune(msg, 0) || !utf8.ValidString(msg) {
			t.Fatalf("message holds a NUL or bytes that are not UTF-8:\n%q", msg)
		}
	})
}

func indexKey(ts []gitstate.Trailer, key string) int {
	for i, t := range ts {
		if t.Key == key {
			return i
		}
	}
	return -1
}

// FuzzSplitPath checks record path validation: it never panics, rejections
// wrap ErrInvalidPath, and an accepted path splits into components git can
// store and that stay inside their directory.
func FuzzSplitPath(f *testing.F) {
	for _, p := range []string{
		"mail/bob/ab/m-01j9z.json", "a", "", "/", "a/", "/a", "a//b", ".", "..", "a/./b", "a/../b",
		"a/..", "...", ".a", "a.", "a\x00b", "a\\b", ".git", "x/.GIT/y", "git~1", "x/.git./y",
		".git ", ".g\u200cit", ".git::$INDEX_ALLOCATION", ".gitmodules", "é/ü", "\xff\xfe",
		strings.Repeat("a/", 100) + "z",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		parts, err := gitstate.SplitPath(path)
		if err != nil {
			if !errors.Is(err, gitstate.ErrInvalidPath) {
				t.Fatalf("%q: error %v does not wrap ErrInvalidPath", path, err)
			}
			return
		}
		if len(parts) == 0 || strings.Join(parts, "/") != path {
			t.Fatalf("%q split into %q", path, parts)
		}
		for _, p := range parts {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\x00") {
				t.Fatalf("%q: accepted component %q", path, p)
			}
			if strings.EqualFold(p, ".git") {
				t.Fatalf("%q: accepted component %q, which git refuses in trees", path, p)
			}
		}
	})
}

// TestAcceptedNamesPassFsck writes records whose path components are names
// git treats specially. Every name the store accepts must give trees that
// `git fsck --strict` accepts (hosts run it on push); the ones git refuses
// must be rejected with ErrInvalidPath before anything is written.
func TestAcceptedNamesPassFsck(t *testing.T) {
	refused := map[string]bool{}
	for _, n := range []string{
		".git", ".GIT", ".Git", "git~1", "GIT~1", ".git.", ".git..", ".git ", ".git. .", ".git::$INDEX_ALLOCATION",
		".git:x", ".git\\x", "git~1 ", "git~1.", ".g\u200cit", "\u200c.git", ".git\u200d", ".gi\ufefft",
	} {
		refused[n] = true
	}
	names := []string{
		"git", ".gitx", ".gi", "git~10", "git~2", "gi~1", ".g", "a\\b", " ", "...", "-", "é", ".gitignore", "x:y",
		"\u200c", ".GIT~1", ".git~1", "\xff.git",
	}
	for n := range refused {
		names = append(names, n)
	}
	ctx := context.Background()
	dir := newStateRepo(t)
	s, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	accepted := 0
	for _, name := range names {
		for _, p := range []string{"t1/" + name, "t2/" + name + "/r.json"} {
			before := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState)
			_, err := s.Update(ctx, func(tx *gitstate.Tx) error {
				tx.SetMeta(meta("put"))
				return tx.Put(p, rec{N: 1})
			})
			if refused[name] != (err != nil) {
				t.Errorf("%q: refused = %v, want %v (err %v)", p, err != nil, refused[name], err)
			}
			if err != nil {
				if !errors.Is(err, gitstate.ErrInvalidPath) {
					t.Errorf("%q: %v", p, err)
				}
				if got := gitstatetest.Git(t, dir, "rev-parse", gitstate.RefState); got != before {
					t.Errorf("%q: rejected, but the ref moved", p)
				}
				continue
			}
			accepted++
			if out, err := gitstatetest.GitErr(dir, "fsck", "--strict", "--no-dangling"); err != nil {
				t.Errorf("%q accepted, but git fsck --strict fails:\n%s", p, out)
				// drop the bad commit so the next names are judged alone
				gitstatetest.Git(t, dir, "update-ref", gitstate.RefState, before)
				gitstatetest.Git(t, dir, "reflog", "expire", "--expire-unreachable=now", "--all")
				gitstatetest.Git(t, dir, "prune", "--expire=now")
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no name accepted")
	}
}
