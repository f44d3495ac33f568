package work

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/repo"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// maxReadFile bounds what epic_read_file returns.
const maxReadFile = 1 << 20

// File sources of epic_read_file.
const (
	SourceWorktree = "worktree"
	SourceBranch   = "branch"
)

// EpicReadFileIn is epic_read_file's input.
type EpicReadFileIn struct {
	TaskID   string `json:"task_id" jsonschema:"the task whose work to read"`
	FilePath string `json:"file_path" jsonschema:"a path relative to the top of the worker's tree, e.g. src/auth.go"`
	Source   string `json:"source,omitempty" jsonschema:"worktree (the worker's files as they are now) or branch (as committed on its branch); default: the worktree when the worker has one"`
}

// FileRead is what epic_read_file returns.
type FileRead struct {
	TaskID   string `json:"task_id"`
	FilePath string `json:"file_path"`
	Source   string `json:"source"`
	From     string `json:"from" jsonschema:"the worktree's path or the branch read"`
	Size     int    `json:"size"`
	Encoding string `json:"encoding" jsonschema:"utf-8, or base64 for a file that is not text"`
	Content  string `json:"content"`
}

// cleanRelPath checks a path the caller names inside a tree: relative,
// with no "..", no ".git" and nothing empty, and returns it in slash form.
func cleanRelPath(p string) (string, error) {
	bad := func(why string) error {
		return tools.Errorf(tools.InvalidInput, "file_path %q %s; name a file relative to the top of the worker's tree", p, why).With("field", "file_path")
	}
	switch {
	case strings.TrimSpace(p) == "":
		return "", bad("is empty")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return "", bad("is absolute")
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch {
		case part == "..":
			return "", bad("leaves the tree (..)")
		case strings.EqualFold(part, ".git"):
			return "", bad("is inside .git")
		}
	}
	clean := filepath.ToSlash(filepath.Clean(p))
	if clean == "." {
		return "", bad("names the tree itself")
	}
	return clean, nil
}

// EpicReadFile reads a file of a worker's work for review.
var EpicReadFile = tools.Define("epic_read_file", "epic.read_file",
	"Read a file of the work on a task, for review: from its worker's worktree (as it is now) or its branch (as committed). "+
		"The path must stay inside that tree: absolute paths, .. and symbolic links that lead out are refused.",
	tools.CLI{Path: "epic read", Args: []string{"task_id", "file_path"}},
	func(ctx context.Context, c *tools.Call, in EpicReadFileIn) (*FileRead, error) {
		rel, err := cleanRelPath(in.FilePath)
		if err != nil {
			return nil, err
		}
		if in.Source != "" && in.Source != SourceWorktree && in.Source != SourceBranch {
			return nil, tools.Errorf(tools.InvalidInput, "source %q: use worktree or branch", in.Source).With("field", "source")
		}
		t, err := getTask(c.Tx, in.TaskID)
		if err != nil {
			return nil, err
		}
		if t.EpicID != "" {
			e, err := getEpic(c.Tx, t.EpicID)
			if err != nil {
				return nil, err
			}
			if err := mayRunEpic(c, e, "read its tasks' files"); err != nil {
				return nil, err
			}
		} else if t.CreatedBy != c.Caller.ID && !tools.MayForce(c.Caller.Type) {
			return nil, tools.Errorf(tools.PermissionDenied, "task %s belongs to no epic; only its creator %s, a person or a supervisor may read its files", t.ID, t.CreatedBy).With("task_id", t.ID)
		}
		var worktree, branch string
		if h := holderOf(t); h != "" {
			if a, err := tools.GetAgent(c.Tx, h); err == nil {
				worktree, branch = a.Worktree, a.Branch
			}
		}
		if t.PR != nil && t.PR.Head != "" {
			branch = t.PR.Head
		}
		src := in.Source
		if src == "" {
			src = SourceBranch
			if worktree != "" {
				src = SourceWorktree
			}
		}
		out := &FileRead{TaskID: t.ID, FilePath: rel, Source: src}
		switch {
		case src == SourceWorktree && worktree == "":
			return nil, tools.Errorf(tools.InvalidInput, "task %s's worker has no worktree git codex knows; read its branch with source: branch", t.ID).With("task_id", t.ID)
		case src == SourceBranch && branch == "":
			return nil, tools.Errorf(tools.InvalidInput, "task %s has no branch git codex knows (no worker instance, no pull request)", t.ID).With("task_id", t.ID)
		case src == SourceWorktree:
			out.From = worktree
		default:
			out.From = branch
		}
		c.Target(t.ID)
		c.Summarize("%s read %s of task %s (%s)", c.Caller.ID, rel, t.ID, src)
		c.After(func(ctx context.Context, f *tools.Followup) error {
			var data []byte
			var err error
			if src == SourceWorktree {
				data, err = readInTree(worktree, rel)
			} else {
				data, err = readAtBranch(ctx, f.Repo, branch, rel)
			}
			if err != nil {
				return err
			}
			out.Size = len(data)
			if utf8.Valid(data) {
				out.Encoding, out.Content = "utf-8", string(data)
			} else {
				out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(data)
			}
			return nil
		})
		return out, nil
	}).Hint(tools.Hints{ReadOnly: true, Idempotent: true})

// readInTree reads root/rel, a regular file whose real path (symbolic
// links resolved) is inside root's.
func readInTree(root, rel string) ([]byte, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, tools.Errorf(tools.ResourceNotFound, "the worktree %s is gone; read the branch with source: branch", root).With("worktree", root)
	}
	full := filepath.Join(realRoot, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, tools.Errorf(tools.ResourceNotFound, "no file %s in %s", rel, root).With("file_path", rel)
	}
	r, err := filepath.Rel(realRoot, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return nil, tools.Errorf(tools.InvalidInput, "%s is a symbolic link that leads out of the worktree; refused", rel).With("file_path", rel)
	}
	// git codex's own files in the worktree (the agent's MCP config, which
	// holds its token) are nobody's work: no tool reads them, however the
	// path leads there (a symbolic link included)
	if instance.OwnsWorktreeFile(filepath.ToSlash(r)) {
		return nil, tools.Errorf(tools.PermissionDenied, "%s is git codex's own file in the worker's worktree (its MCP configuration and credential), not work; refused", rel).With("file_path", rel)
	}
	fh, err := os.Open(real)
	if err != nil {
		return nil, tools.Errorf(tools.ResourceNotFound, "cannot open %s: %v", rel, err).With("file_path", rel)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, tools.Errorf(tools.InvalidInput, "%s is not a regular file", rel).With("file_path", rel)
	}
	if fi.Size() > maxReadFile {
		return nil, tools.Errorf(tools.InvalidInput, "%s is %d bytes; epic_read_file returns at most %d", rel, fi.Size(), maxReadFile).With("file_path", rel).With("size", fi.Size())
	}
	return io.ReadAll(io.LimitReader(fh, maxReadFile))
}

// readAtBranch reads rel as committed on branch: a regular file, never a
// symbolic link's target.
func readAtBranch(ctx context.Context, st tools.CodeRepo, branch, rel string) ([]byte, error) {
	data, err := st.ReadFileAt(ctx, "refs/heads/"+branch, rel)
	switch {
	case errors.Is(err, repo.ErrNotRegularFile):
		return nil, tools.Errorf(tools.InvalidInput, "%s on %s is not a regular file (a symbolic link, directory or submodule); refused", rel, branch).With("file_path", rel)
	case errors.Is(err, gitstate.ErrNotFound):
		return nil, tools.Errorf(tools.ResourceNotFound, "no file %s on branch %s (fetch the branch if it is only on the remote)", rel, branch).With("file_path", rel).With("branch", branch)
	case err != nil:
		return nil, err
	case len(data) > maxReadFile:
		return nil, tools.Errorf(tools.InvalidInput, "%s is %d bytes; epic_read_file returns at most %d", rel, len(data), maxReadFile).With("file_path", rel).With("size", len(data))
	}
	return data, nil
}
