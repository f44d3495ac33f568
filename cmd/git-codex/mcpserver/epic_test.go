package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
	"github.com/gitcodex/git-codex/tools/work"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testForge is a GitHub kept in memory for the MCP tests of the epic
// tools: enough of the contract for the review queue and the epic's pull
// request (tools/builtin/epic_rest_test.go runs them over go-gh against
// github/githubtest).
type testForge struct {
	mu  sync.Mutex
	prs []tools.PullRequest
}

func (f *testForge) Repo() string                                  { return "acme/widgets" }
func (f *testForge) DefaultBranch(context.Context) (string, error) { return "main", nil }

func (f *testForge) CreatePullRequest(_ context.Context, in tools.NewPullRequest) (tools.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.prs) + 1
	pr := tools.PullRequest{Number: n, URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d", n), Head: in.Head, Base: in.Base, State: "open"}
	f.prs = append(f.prs, pr)
	return pr, nil
}

func (f *testForge) FindPullRequest(_ context.Context, head, base string) (tools.PullRequest, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, pr := range f.prs {
		if pr.Head == head && pr.Base == base && pr.State == "open" {
			return pr, true, nil
		}
	}
	return tools.PullRequest{}, false, nil
}

func (f *testForge) GetPullRequest(_ context.Context, n int) (tools.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 1 || n > len(f.prs) {
		return tools.PullRequest{}, &tools.GitHubError{Status: 404, Message: "Not Found"}
	}
	return f.prs[n-1], nil
}

func (f *testForge) MergePullRequest(_ context.Context, n int, _ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 1 || n > len(f.prs) || f.prs[n-1].Merged {
		return "", &tools.GitHubError{Status: 405, Message: "Pull Request is not mergeable"}
	}
	f.prs[n-1].Merged, f.prs[n-1].State = true, "closed"
	return fmt.Sprintf("%040x", n), nil
}

func (f *testForge) CreateIssue(context.Context, tools.NewIssue) (tools.Issue, error) {
	return tools.Issue{}, &tools.GitHubError{Status: 501, Message: "not here"}
}

func (f *testForge) FindIssue(context.Context, string) (tools.Issue, bool, error) {
	return tools.Issue{}, false, nil
}

// mcpConnectForge connects caller to a server whose tools reach forge.
func mcpConnectForge(t *testing.T, dir, caller string, forge *testForge) *mcp.ClientSession {
	t.Helper()
	reg := builtin.Registry().WithEnv(tools.Env{GitHub: func(context.Context, tools.GitHubSettings) (tools.GitHub, error) { return forge, nil }})
	s := New(reg, mcpStore(t, dir), tools.Origin{ID: caller}, Options{Logger: slog.New(slog.NewTextHandler(&syncBuffer{}, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// submitPR records a pull request on a task as create_pull_request does
// (the task to REVIEW, its submission time), opened from head into base
// on forge.
func submitPR(t *testing.T, dir string, forge *testForge, taskID, head, base string) {
	t.Helper()
	pr, _ := forge.CreatePullRequest(context.Background(), tools.NewPullRequest{Title: "work", Head: head, Base: base})
	path := "tasks/" + gitstate.Fanout(taskID) + "/" + taskID + ".json"
	_, err := mcpStore(t, dir).Update(context.Background(), func(tx *gitstate.Tx) error {
		var tk work.Task
		if err := tx.Get(path, &tk); err != nil {
			return err
		}
		now := time.Now().UTC()
		tk.PR, tk.SubmittedAt, tk.State, tk.Clock = &pr, &now, work.TaskReview, tx.Clock()
		tx.SetMeta(gitstate.Meta{Summary: "test: a pull request as create_pull_request records it"})
		return tx.Put(path, tk)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// commitFile commits one file at the top of dir's work tree.
func commitFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gitstatetest.Git(t, dir, "add", name)
	gitstatetest.Git(t, dir, "commit", "-q", "-m", "add "+name)
}
