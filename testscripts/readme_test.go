package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestReadmeTour runs the README's "five-minute tour" as it is written: the
// commands are read from README.md when the test runs, so a tour step that
// stops working (as `config set policy.worker.allow` once broke the steps
// after it) fails here. Each line becomes a script step; a line whose
// comment starts with an error code and a colon ("# PERMISSION_DENIED:
// ...") must be refused with that code, every other line must succeed.
// Placeholders such as <mail-id> are filled in from the state by the steps
// in tourPlaceholders, run just before the line that first needs them.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := tourScript(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tour.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup:               setup,
		Cmds:                customCommands(),
	})
}

// tourPlaceholders says how the test finds the value a reader would copy
// into each placeholder, and the script variable that holds it.
var tourPlaceholders = map[string]struct {
	variable string
	steps    []string
}{
	"<mail-id>": {"MAIL_ID", []string{"exec git codex --as boss mail inbox --include-read --json", "jsonget MAIL_ID stdout mails.0.id"}},
	"<task-id>": {"TASK_ID", []string{"exec git codex task list --state PENDING --json", "jsonget TASK_ID stdout tasks.0.id"}},
}

var (
	tourRefusal     = regexp.MustCompile(`^([A-Z][A-Z_]+):`)
	tourPlaceholder = regexp.MustCompile(`<[^<>]+>`)
)

// tourScript turns the tour's shell block into a testscript.
func tourScript(readme string) (string, error) {
	_, after, ok := strings.Cut(readme, "\n## A five-minute tour\n")
	if !ok {
		return "", fmt.Errorf("README.md has no \"## A five-minute tour\" section")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		return "", fmt.Errorf("the tour has no ```sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	var out strings.Builder
	out.WriteString("# generated from README.md's tour by TestReadmeTour\n")
	known := map[string]bool{}
	steps := 0
	for _, line := range strings.Split(block, "\n") {
		words, comment, err := shellWords(line)
		if err != nil {
			return "", fmt.Errorf("tour line %q: %w", line, err)
		}
		if len(words) == 0 {
			continue
		}
		steps++
		if words[0] == "cd" && len(words) == 2 {
			fmt.Fprintf(&out, "exec git init -q %s\ncd %s\n", quote(words[1]), quote(words[1]))
			continue
		}
		if words[0] != "git" {
			return "", fmt.Errorf("tour line %q: only git commands can be run", line)
		}
		args := make([]string, len(words))
		for i, w := range words {
			args[i] = quote(w)
			if !tourPlaceholder.MatchString(w) {
				continue
			}
			p, ok := tourPlaceholders[w]
			if !ok {
				return "", fmt.Errorf("tour line %q: placeholder %s: teach TestReadmeTour (tourPlaceholders) how to fill it", line, w)
			}
			if !known[w] {
				out.WriteString(strings.Join(p.steps, "\n") + "\n")
				known[w] = true
			}
			args[i] = "$" + p.variable
		}
		if m := tourRefusal.FindStringSubmatch(comment); m != nil {
			fmt.Fprintf(&out, "! exec %s\nstderr '^git codex: %s: '\n", strings.Join(args, " "), m[1])
			continue
		}
		fmt.Fprintf(&out, "exec %s\n", strings.Join(args, " "))
	}
	if steps < 10 {
		return "", fmt.Errorf("the tour has only %d steps; is the block still there?", steps)
	}
	return out.String(), nil
}

// quote makes one word one testscript argument.
func quote(w string) string { return "'" + strings.ReplaceAll(w, "'", "''") + "'" }

// shellWords splits a line as sh would, for the little the tour uses:
// words, '...' and "..." quoting, and a trailing # comment, returned
// without its "#" and leading spaces.
func shellWords(line string) (words []string, comment string, err error) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '#' && !inWord:
			return words, strings.TrimSpace(line[i+1:]), nil
		case ch == '\'' || ch == '"':
			end := strings.IndexByte(line[i+1:], ch)
			if end < 0 {
				return nil, "", fmt.Errorf("unterminated %c", ch)
			}
			cur.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 1
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, "", nil
}

// TestReadmeListsMakeTargets keeps the README's list of make targets and
// its first steps true: every target a user runs is named, and the PATH
// step `git codex` needs is there.
func TestReadmeListsMakeTargets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindSubmatch(makefile)
	if phony == nil {
		t.Fatal("Makefile has no .PHONY line")
	}
	internal := map[string]bool{"fmt": true, "clean": true, "install-man": true}
	for _, target := range strings.Fields(string(phony[1])) {
		if !internal[target] && !strings.Contains(string(readme), "`make "+target+"`") {
			t.Errorf("README.md does not mention `make %s`", target)
		}
	}
	for _, want := range []string{`export PATH="$PATH:$(go env GOPATH)/bin"`, "downloads the Go modules", "share/man/man1"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}

// TestReadmeSetup runs the README's setup block (the first ```sh block of
// "## Set up") verbatim with sh -e, from the source tree, as someone new
// would paste it: a fresh HOME (so GOPATH is ~/go, whose bin is on no
// PATH yet) holding ~/your-repo, and a PATH without any git-codex. Only
// Go's module and build caches are shared, so that nothing is downloaded
// and the build takes seconds. The block once ran `git codex init` before
// the PATH step that makes `git codex` work.
func TestReadmeSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs git-codex")
	}
	for _, p := range []string{"make", "go", "git"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s", p)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Set up\n")
	if !ok {
		t.Fatal(`README.md has no "## Set up" section`)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("the setup section has no ```sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	if !strings.Contains(block, "make install") || !strings.Contains(block, "git codex init") {
		t.Fatalf("the setup block no longer installs and inits:\n%s", block)
	}
	goenv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	modcache, gocache := goenv("GOMODCACHE"), goenv("GOCACHE")
	home := t.TempDir()
	repo := filepath.Join(home, "your-repo")
	gitconfig := "[user]\n\tname = New User\n\temail = new@example.com\n[init]\n\tdefaultBranch = main\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	// PATH as on a machine without git codex: every directory that holds
	// a git-codex left out
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "git-codex")); err != nil && d != "" {
			path = append(path, d)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + strings.Join(path, string(filepath.ListSeparator)),
		"GOMODCACHE=" + modcache, "GOCACHE=" + gocache, "GOPROXY=off", "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8"}
	for _, k := range []string{"GOTOOLCHAIN", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	git := exec.Command("git", "init", "-q", repo)
	git.Env = env
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	sh := exec.Command("sh", "-e", "-c", block)
	sh.Dir = ".."
	sh.Env = env
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's setup block failed: %v\n%s\n--- the block:\n%s", err, out, block)
	}
	state := exec.Command("git", "-C", repo, "rev-parse", "--verify", "-q", "refs/codex/state")
	state.Env = env
	if err := state.Run(); err != nil {
		t.Fatalf("after the setup block, %s has no refs/codex/state:\n%s", repo, out)
	}
	for _, f := range []string{"go/bin/git-codex", "go/share/man/man1/git-codex.1"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("the setup block did not install ~/%s", f)
		}
	}
}
