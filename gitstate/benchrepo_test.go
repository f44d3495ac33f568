package gitstate_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
)

// benchRepo is a bare repository that benchmarks build once with
// `git fast-import` and cache under os.TempDir() as <name>-<version>, so
// later runs reuse it. Benchmarks work on copies (copyRepo).
type benchRepo struct {
	name, version string
	about         string                                   // what it holds, for the log
	feed          func(w *bufio.Writer, data func(string)) // the fast-import commands, without "done"
	after         [][]string                               // git commands to run in it once imported

	once sync.Once
	dir  string
	err  error
}

// get returns the cached repository, building it on first use.
func (r *benchRepo) get(b *testing.B) string {
	b.Helper()
	r.once.Do(func() {
		r.dir = filepath.Join(os.TempDir(), r.name+"-"+r.version)
		if _, err := os.Stat(filepath.Join(r.dir, "bench-ready")); err == nil {
			return
		}
		b.Logf("building %s in %s; later runs reuse it", r.about, r.dir)
		start := time.Now()
		r.err = r.build(r.dir)
		b.Logf("built in %s", time.Since(start).Round(time.Second))
	})
	if r.err != nil {
		b.Fatal(r.err)
	}
	return r.dir
}

// build imports the repository into a temporary directory and renames it
// into place only when complete, so an interrupted build is never reused.
func (r *benchRepo) build(dst string) error {
	tmp := fmt.Sprintf("%s.tmp-%d", dst, os.Getpid())
	os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	if out, err := gitstatetest.GitErr(os.TempDir(), "init", "-q", "--bare", tmp); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	cmd := exec.Command("git", "fast-import", "--quiet", "--done")
	cmd.Dir = tmp
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	r.feed(w, func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) })
	fmt.Fprintf(w, "done\n")
	if err := w.Flush(); err != nil {
		return err
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git fast-import: %v: %s", err, stderr.String())
	}
	for _, args := range append(r.after, []string{"pack-refs", "--all"}) {
		if out, err := gitstatetest.GitErr(tmp, args...); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "bench-ready"), []byte(r.version+"\n"), 0o644); err != nil {
		return err
	}
	os.RemoveAll(dst)
	return os.Rename(tmp, dst)
}
