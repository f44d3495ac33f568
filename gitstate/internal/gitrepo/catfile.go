package gitrepo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"
	"github.com/go-git/go-git/v5/plumbing"
)

// gitCat serves the objects the store's own reader cannot: objects of a
// partial clone that git fetches from its promisor remote on demand, packs
// whose index is of a version the reader does not know, and whatever else
// git learns to store. It is one `git cat-file --batch` process, started
// at the first such object and kept for the Store's life, so a state that
// reads mostly from git costs one process, not one per object. An object
// git does not have either is missing (plumbing.ErrObjectNotFound).
type gitCat struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// viaGit reads h through git, starting the cat-file process if needed.
// The caller holds objMu.
func (o *Objects) viaGit(h plumbing.Hash) (packed, error) {
	if o.cat == nil {
		cmd := exec.Command("git", "--git-dir", filepath.Dir(o.dir), "cat-file", "--batch")
		cmd.Env = gitcli.Env()
		in, err := cmd.StdinPipe()
		if err != nil {
			return packed{}, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return packed{}, err
		}
		if err := cmd.Start(); err != nil {
			return packed{}, fmt.Errorf("gitstate: start git cat-file: %w", err)
		}
		o.cat = &gitCat{cmd: cmd, in: in, out: bufio.NewReader(out)}
	}
	v, err := o.cat.read(h)
	if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
		o.cat.close() // out of step with its output: the next read starts another
		o.cat = nil
	}
	return v, err
}

func (c *gitCat) read(h plumbing.Hash) (packed, error) {
	if _, err := io.WriteString(c.in, h.String()+"\n"); err != nil {
		return packed{}, fmt.Errorf("gitstate: git cat-file: %w", err)
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return packed{}, fmt.Errorf("gitstate: git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" {
		return packed{}, plumbing.ErrObjectNotFound
	}
	if len(f) != 3 || f[0] != h.String() {
		return packed{}, fmt.Errorf("gitstate: git cat-file answered %q for %s", strings.TrimSpace(line), h)
	}
	typ, err := plumbing.ParseObjectType(f[1])
	size, serr := strconv.ParseInt(f[2], 10, 64)
	if err != nil || serr != nil || size < 0 || size > 1<<40 {
		return packed{}, fmt.Errorf("gitstate: git cat-file answered %q for %s", strings.TrimSpace(line), h)
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(c.out, data); err != nil {
		return packed{}, fmt.Errorf("gitstate: git cat-file: %w", err)
	}
	return packed{typ: typ, data: data[:size]}, nil
}

func (c *gitCat) close() {
	c.in.Close()
	c.cmd.Wait()
}
