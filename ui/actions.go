package ui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// maxArgs bounds an action's arguments (a mail body is the largest).
const maxArgs = 1 << 20

// serveCall answers POST /api/call/{tool}: the page's actions (send mail
// as the person, nudge, peek, abandon, kill, anything the CLI lets them
// do). The body is the tool's arguments as JSON; the answer is the tool's
// result, exactly what `git codex call` prints. It is the registry's call,
// as the CLI makes it, with the same audit commit and the same permission
// check: the page gives no powers the CLI does not.
func (s *Server) serveCall(w http.ResponseWriter, r *http.Request) {
	if s.opts.Caller == "" {
		writeError(w, http.StatusForbidden, "PERMISSION_DENIED", "the page does not know who you are: set `git config user.email` and restart `git codex ui`")
		return
	}
	name := r.PathValue("tool")
	if _, ok := s.opts.Registry.Lookup(name); !ok {
		writeError(w, http.StatusNotFound, "UNKNOWN_TOOL", "no tool named "+name+"; GET /api/tools lists them")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxArgs+1))
	if err != nil {
		return
	}
	if len(body) > maxArgs {
		writeError(w, http.StatusRequestEntityTooLarge, "INVALID_INPUT", "the arguments are larger than 1 MiB")
		return
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) {
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "the body must be the tool's arguments as a JSON object")
		return
	}
	// The call outlives a page that leaves: it is one transaction (and
	// maybe work outside git) that must finish and be recorded either way.
	ctx := context.WithoutCancel(r.Context())
	res := s.opts.Registry.CallAs(ctx, s.opts.Store, tools.Origin{ID: s.opts.Caller}, name, body)
	writeJSON(w, http.StatusOK, res)
}

// toolJSON is one tool as /api/tools lists it.
type toolJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Command     string `json:"command,omitempty"`
	ReadOnly    bool   `json:"read_only"`
}

// serveTools answers GET /api/tools: the tools the page's person may call
// under the current policy, for the page's action form.
func (s *Server) serveTools(w http.ResponseWriter, r *http.Request) {
	out := []toolJSON{}
	err := s.opts.Store.View(r.Context(), func(sn *gitstate.Snapshot) error {
		ts, err := s.opts.Registry.Permitted(sn, s.opts.Caller)
		for _, t := range ts {
			out = append(out, toolJSON{Name: t.Name, Description: t.Description, Command: t.CLI.Path, ReadOnly: t.Hints.ReadOnly})
		}
		return err
	})
	if err != nil && !errors.Is(err, gitstate.ErrNotInitialized) {
		storeError(w, r, err)
		return
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	writeJSON(w, http.StatusOK, out)
}
