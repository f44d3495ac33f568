package prompts

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestSearchRanksSeedExample(t *testing.T) {
	cat := Load(tree(t, "climpt", nil), DefaultAgent)
	tests := []struct {
		query string
		first string
	}{
		{"group changes and commit", "git group-commit unstaged-changes"},
		{"decide whether to create a new branch", "git decide-branch working-branch"},
		{"merge my branch into its parent", "git merge-up base-branch"},
		{"generate frontmatter", "meta build frontmatter"},
		{"review a coder's changes", "codex review changes"},
		{"run the tests for one target", "test run specific"},
		{"GroupCommit", "git group-commit unstaged-changes"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res := cat.Search(tt.query, 0)
			if len(res) == 0 {
				t.Fatal("no results")
			}
			if got := Key(res[0].C1, res[0].C2, res[0].C3); got != tt.first {
				t.Errorf("first = %s (%.4f), want %s; all: %v", got, res[0].Score, tt.first, res)
			}
		})
	}
}

func TestSearchScores(t *testing.T) {
	cat := Load(tree(t, "climpt", nil), DefaultAgent)
	res := cat.Search("group changes and commit", 0)
	if res[0].Score < 0.5 {
		t.Errorf("the seed's example scores %.4f, want a moderate match or better", res[0].Score)
	}
	if len(res) < 2 || res[1].Score >= res[0].Score {
		t.Errorf("runner-up %v not below the best", res)
	}
	for _, q := range []string{"group changes and commit", "branch", "git", "frontmatter instruction create", "zzz unknown words", "commit commit commit"} {
		res := cat.Search(q, 0)
		for i, r := range res {
			if r.Score <= 0 || r.Score > 1 {
				t.Errorf("%q: score %v out of (0, 1]", q, r.Score)
			}
			if i > 0 && (res[i-1].Score < r.Score || (res[i-1].Score == r.Score && Key(res[i-1].C1, res[i-1].C2, res[i-1].C3) > Key(r.C1, r.C2, r.C3))) {
				t.Errorf("%q: results out of order at %d: %v", q, i, res)
			}
		}
	}
	// A query that is a command's whole document scores 1.
	gc, _ := cat.Lookup("git", "group-commit", "unstaged-changes")
	if r := cat.Search(gc.document(), 1); r[0].Score != 1 || r[0].C2 != "group-commit" {
		t.Errorf("the document itself: %v", r)
	}
	if r := cat.Search("zzz qqq", 0); len(r) != 0 {
		t.Errorf("words nothing holds found %v", r)
	}
	if r := cat.Search("branch", 2); len(r) != 2 {
		t.Errorf("limit 2 returned %d", len(r))
	}
	if HasTerms("  and the , ") || !HasTerms("commit") {
		t.Error("HasTerms")
	}
}

// Commands with the same document tie; their order is their C3L names',
// whatever order they were loaded in.
func TestSearchTiesAreDeterministic(t *testing.T) {
	var cmds []*Command
	for _, c3 := range []string{"delta", "alpha", "charlie", "bravo"} {
		cmds = append(cmds, &Command{C1: "x", C2: "same", C3: c3, Description: "identical words here"})
	}
	want := []string{"alpha", "bravo", "charlie", "delta"}
	for i := 0; i < 20; i++ {
		rand.Shuffle(len(cmds), func(a, b int) { cmds[a], cmds[b] = cmds[b], cmds[a] })
		var got []string
		for _, r := range buildIndex(cmds).search("identical words", 0) {
			got = append(got, r.C3)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestTokenize(t *testing.T) {
	got := tokenize("Group-commit unstaged_changes groupCommit, and the branches!")
	want := []string{"group-commit", "group", "commit", "unstaged-change", "unstaged", "change", "groupcommit", "group", "commit", "branch"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokenize = %v\nwant %v", got, want)
	}
}

// corpus builds n commands with varied descriptions from a fixed
// vocabulary, reproducibly.
func corpus(n int) []*Command {
	words := strings.Fields("analyze branch build change code commit config create decide deploy describe diff doc execute file find " +
		"fix frontmatter generate group instruction issue list merge migrate parent plan project pull refactor release report " +
		"request review schema search select spec split squash summary target task test update version workflow write")
	r := rand.New(rand.NewSource(1))
	cmds := make([]*Command, n)
	for i := range cmds {
		var d []string
		for j := 0; j < 8+r.Intn(10); j++ {
			d = append(d, words[r.Intn(len(words))])
		}
		cmds[i] = &Command{C1: fmt.Sprintf("d%02d", i%40), C2: words[r.Intn(len(words))] + "-" + words[r.Intn(len(words))], C3: fmt.Sprintf("t%04d", i),
			Description: strings.Join(d, " "), Usage: "climpt-x " + words[r.Intn(len(words))]}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Key() < cmds[j].Key() })
	return cmds
}

// BenchmarkSearch1000 is prompt_search's ranking over a registry of 1,000
// commands (the index built once, as a load does).
func BenchmarkSearch1000(b *testing.B) {
	ix := buildIndex(corpus(1000))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(ix.search("group the changes and commit them by meaning", DefaultLimit)) == 0 {
			b.Fatal("no results")
		}
	}
}

// BenchmarkIndex1000 is building the index of 1,000 commands: the part of
// a load that is not reading files.
func BenchmarkIndex1000(b *testing.B) {
	cmds := corpus(1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buildIndex(cmds)
	}
}

// BenchmarkLoad1000 is loading a registry of 1,000 commands from disk,
// each with a template file: what prompt_reload and a CLI call pay.
func BenchmarkLoad1000(b *testing.B) {
	dir := b.TempDir()
	var items []string
	for _, c := range corpus(1000) {
		items = append(items, fmt.Sprintf(`{"c1":%q,"c2":%q,"c3":%q,"description":%q,"usage":%q}`, c.C1, c.C2, c.C3, c.Description, c.Usage))
		writeB(b, dir, fmt.Sprintf(".agent/climpt/prompts/%s/%s/%s/f_default.md", c.C1, c.C2, c.C3), "---\ntitle: t\n---\n{input_text}\n")
	}
	writeB(b, dir, ".agent/climpt/registry.json", `{"version":"1","tools":{"commands":[`+strings.Join(items, ",")+`]}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if cat := Load(dir, DefaultAgent); len(cat.Commands()) != 1003 || len(cat.Problems) != 0 {
			b.Fatalf("%d commands, %v", len(cat.Commands()), cat.Problems)
		}
	}
}
