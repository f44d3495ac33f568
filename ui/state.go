package ui

import (
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/instance"
)

// perKind bounds the records of one kind /api/state carries (the newest
// by id; ids are time-ordered); /api/records pages through the rest.
const perKind = 300

// stateJSON is /api/state's answer: the whole state at one commit.
type stateJSON struct {
	Initialized bool   `json:"initialized"`
	Hint        string `json:"hint,omitempty"`
	Commit      string `json:"commit,omitempty"`
	// Tip says this is the current state (no ?at=): only then are the
	// agents' live tmux states read.
	Tip         bool           `json:"tip"`
	Time        time.Time      `json:"time"`
	Clock       gitstate.Clock `json:"clock"`
	Caller      string         `json:"caller,omitempty"`
	ReviewLimit int            `json:"review_limit,omitempty"`
	// Agents are every agent: the instances git codex runs (with status,
	// branch, worktree and, at the tip, "live": running, dead, missing or elsewhere)
	// and registered agents.
	Agents []instance.View `json:"agents"`
	// Mail counts messages per recipient ("human" is the people's inbox).
	Mail  map[string]mailCount `json:"mail"`
	Tasks []json.RawMessage    `json:"tasks"`
	Locks []json.RawMessage    `json:"locks"`
	// Kinds are every record kind the tools define (tools.Kinds), each
	// with its newest records: a kind added to the table shows here with
	// no change to the page's server.
	Kinds []kindJSON `json:"kinds"`
}

type mailCount struct {
	Total  int `json:"total"`
	Unread int `json:"unread"`
}

type kindJSON struct {
	Name    string            `json:"name"`
	Dir     string            `json:"dir"`
	Count   int               `json:"count"`
	Records []json.RawMessage `json:"records"`
	// More says Records holds only the newest perKind of Count.
	More bool `json:"more,omitempty"`
}

// notInitialized is what the page shows in a repository without state.
const notInitialized = "This repository has no git codex state yet. Start with `git codex init`, then `git codex spawn coding \"<task>\"`; this page updates by itself."

// serveState answers GET /api/state (?at= for a past state). Everything
// comes from one snapshot, so a ref that moves meanwhile cannot mix two
// states in one answer.
func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	at, ok := s.at(w, r)
	if !ok {
		return
	}
	out := stateJSON{Caller: s.opts.Caller, Agents: []instance.View{}, Mail: map[string]mailCount{},
		Tasks: []json.RawMessage{}, Locks: []json.RawMessage{}, Kinds: []kindJSON{}}
	err := s.opts.Store.ViewAt(r.Context(), at, func(sn *gitstate.Snapshot) error {
		return s.readState(r, sn, at == "", &out)
	})
	switch {
	case errors.Is(err, gitstate.ErrNotInitialized):
		writeJSON(w, http.StatusOK, stateJSON{Hint: notInitialized, Agents: out.Agents, Mail: out.Mail, Tasks: out.Tasks, Locks: out.Locks, Kinds: out.Kinds})
	case err != nil:
		storeError(w, r, err)
	default:
		body, err := encodeJSON(out)
		if err != nil {
			// a record that is not JSON among the newest shown (the
			// encoder checks each): left out, as readKind leaves it out
			out.dropInvalid()
			body, err = encodeJSON(out)
		}
		if err != nil {
			storeError(w, r, err)
			return
		}
		writeBody(w, http.StatusOK, body)
	}
}

// dropInvalid leaves out of the records shown those that are not JSON:
// counted by their names (kindReduction), not shown. Sync refuses such a
// file under a kind's directory; only a commit made by hand has one, so
// the records are checked one by one only when the answer could not be
// written (checking the ~900 shown at every poll was a sixth of a running
// page's answer).
func (out *stateJSON) dropInvalid() {
	for i, k := range out.Kinds {
		valid := k.Records[:0:0]
		for _, rec := range k.Records {
			if json.Valid(rec) {
				valid = append(valid, rec)
			}
		}
		out.Kinds[i].Records = valid
		switch k.Name {
		case "task":
			out.Tasks = valid
		case "lock":
			out.Locks = valid
		}
	}
}

func (s *Server) readState(r *http.Request, sn *gitstate.Snapshot, tip bool, out *stateJSON) error {
	out.Initialized, out.Tip = true, tip
	out.Commit, out.Time, out.Clock = sn.Commit(), sn.Time(), sn.Clock()
	var err error
	if out.ReviewLimit, err = instance.ReviewLimit(sn, s.opts.Registry.ConfigKeys()); err != nil {
		return err
	}
	for _, k := range s.opts.Registry.Kinds() {
		if k.Name == "agent" {
			if out.Agents, err = s.agents(r, sn, k, tip); err != nil {
				return err
			}
			out.Kinds = append(out.Kinds, kindJSON{Name: k.Name, Dir: k.Dir, Count: len(out.Agents), Records: []json.RawMessage{}})
			continue
		}
		red := kindReduction(k.Name, tip)
		v, err := sn.Reduce(k.Dir, red)
		if err != nil {
			return err
		}
		part := v.(kindPart)
		kj := kindJSON{Name: k.Name, Dir: k.Dir, Count: part.count, Records: []json.RawMessage{}, More: part.count > perKind}
		for _, rec := range part.newest {
			// through the trees the reduce kept, where it did
			data, err := sn.ReadKept(red, k.Dir, rec.path)
			if err != nil {
				return err
			}
			kj.Records = append(kj.Records, data) // checked as it is written (dropInvalid)
		}
		for to, c := range part.mail {
			out.Mail[to] = c
		}
		switch k.Name {
		case "task":
			out.Tasks = kj.Records
		case "lock":
			out.Locks = kj.Records
		}
		out.Kinds = append(out.Kinds, kj)
	}
	return nil
}

// agents reads every agent; at the tip, with the live state of instances'
// tmux sessions.
func (s *Server) agents(r *http.Request, sn *gitstate.Snapshot, k tools.Kind, tip bool) ([]instance.View, error) {
	if tip {
		machine, err := s.opts.Store.MachineID()
		if err != nil {
			return nil, err
		}
		v, err := instance.LiveInstances(r.Context(), sn, s.opts.Registry.ConfigKeys(), s.opts.Registry.Env(), machine)
		if v == nil {
			v = []instance.View{}
		}
		return v, err
	}
	recs, err := readKind(sn, k.Dir, "")
	if err != nil {
		return nil, err
	}
	out := make([]instance.View, 0, len(recs))
	for _, rec := range recs {
		var v instance.View
		if err := json.Unmarshal(rec.data, &v.Agent); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// record is one record file of the state.
type record struct {
	name string // the file name without .json: its id
	data json.RawMessage
}

// readKind reads the records under dir (and under, a path below it),
// newest first by id.
func readKind(sn *gitstate.Snapshot, dir, under string) ([]record, error) {
	if under != "" {
		dir += "/" + under
	}
	var recs []record
	err := sn.Walk(dir, func(p string, data []byte) error {
		name, ok := strings.CutSuffix(path.Base(p), ".json")
		if !ok || !json.Valid(data) {
			return nil // not a record the page can show (as kindReduction's Leaf and dropInvalid)
		}
		recs = append(recs, record{name: name, data: data})
		return nil
	})
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].name > recs[j].name })
	return recs, err
}

// recordPage is /api/records/{kind}'s answer.
type recordPage struct {
	Kind    string            `json:"kind"`
	Count   int               `json:"count"`
	Records []json.RawMessage `json:"records"`
}

// serveRecords answers GET /api/records/{kind}: one kind's records, newest
// first, paged (offset, limit), optionally only those under a path below
// the kind's directory (under=<recipient> for one inbox).
func (s *Server) serveRecords(w http.ResponseWriter, r *http.Request) {
	var kind tools.Kind
	found := false
	for _, k := range s.opts.Registry.Kinds() {
		if k.Name == r.PathValue("kind") {
			kind, found = k, true
		}
	}
	if !found {
		writeError(w, http.StatusNotFound, "RESOURCE_NOT_FOUND", "no record kind "+strconv.Quote(r.PathValue("kind"))+"; /api/state lists the kinds")
		return
	}
	q := r.URL.Query()
	offset, err1 := atoiOr(q.Get("offset"), 0)
	limit, err2 := atoiOr(q.Get("limit"), 100)
	under := q.Get("under")
	if err1 != nil || err2 != nil || offset < 0 || limit < 1 || limit > 1000 ||
		strings.Contains(under, "..") || strings.HasPrefix(under, "/") || strings.ContainsRune(under, 0) {
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "offset must be 0 or more, limit 1 to 1000, under a path below the kind's directory")
		return
	}
	at, ok := s.at(w, r)
	if !ok {
		return
	}
	page := recordPage{Kind: kind.Name, Records: []json.RawMessage{}}
	err := s.opts.Store.ViewAt(r.Context(), at, func(sn *gitstate.Snapshot) error {
		recs, err := readKind(sn, kind.Dir, under)
		page.Count = len(recs)
		for i := offset; i < len(recs) && i < offset+limit; i++ {
			page.Records = append(page.Records, recs[i].data)
		}
		return err
	})
	switch {
	case errors.Is(err, gitstate.ErrNotInitialized):
		writeJSON(w, http.StatusOK, page)
	case errors.Is(err, gitstate.ErrInvalidPath):
		writeError(w, http.StatusBadRequest, "INVALID_INPUT", "under must be a path below the kind's directory")
	case err != nil:
		storeError(w, r, err)
	default:
		writeJSON(w, http.StatusOK, page)
	}
}

func atoiOr(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}
