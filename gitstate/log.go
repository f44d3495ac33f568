package gitstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/merkletrie"
)

// Event is one state commit read back as an audit record.
type Event struct {
	Commit  string
	Parents []string
	Time    time.Time
	Author  Signature
	Clock   Clock
	Meta
}

// Events calls fn for the commits reachable from rev ("" for the tip),
// newest first by commit time and following every parent, so after a sync
// the events of both sides appear. fn returns false to stop.
func (s *Store) Events(ctx context.Context, rev string, fn func(Event) bool) error {
	h, err := s.resolve(ctx, rev)
	if err != nil {
		return err
	}
	start, err := s.readCommit(h)
	if err != nil {
		return err
	}
	// The walk reads objects through go-git, so it holds objMu, but only
	// while it steps: fn may use the store.
	s.objMu.Lock()
	it := object.NewCommitIterCTime(start, nil, nil)
	s.objMu.Unlock()
	defer it.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.objMu.Lock()
		c, err := it.Next()
		s.objMu.Unlock()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gitstate: walk history: %w", err)
		}
		if !fn(eventOf(c)) {
			return nil
		}
	}
}

// Event reads one commit as an event.
func (s *Store) Event(ctx context.Context, rev string) (Event, error) {
	h, err := s.resolve(ctx, rev)
	if err != nil {
		return Event{}, err
	}
	c, err := s.readCommit(h)
	if err != nil {
		return Event{}, err
	}
	return eventOf(c), nil
}

func eventOf(c *object.Commit) Event {
	e := Event{
		Commit: c.Hash.String(),
		Time:   c.Committer.When,
		Author: Signature{Name: c.Author.Name, Email: c.Author.Email},
		Clock:  clockOf(c.Message),
		Meta:   parseMessage(c.Message),
	}
	for _, p := range c.ParentHashes {
		e.Parents = append(e.Parents, p.String())
	}
	return e
}

// Change is one record a commit added, modified or deleted.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // "add", "modify" or "delete"
}

// Changes lists the records a commit changed relative to its first parent.
func (s *Store) Changes(ctx context.Context, rev string) ([]Change, error) {
	h, err := s.resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	s.objMu.Lock()
	defer s.objMu.Unlock()
	c, err := s.objects.commit(h)
	if err != nil {
		return nil, err
	}
	to, err := s.objects.tree(c.TreeHash)
	if err != nil {
		return nil, err
	}
	from := &object.Tree{}
	if len(c.ParentHashes) > 0 {
		p, err := s.objects.commit(c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		if from, err = s.objects.tree(p.TreeHash); err != nil {
			return nil, err
		}
	}
	diff, err := object.DiffTreeWithOptions(ctx, from, to, nil)
	if err != nil {
		return nil, fmt.Errorf("gitstate: diff %s: %w", h, err)
	}
	out := make([]Change, 0, len(diff))
	for _, ch := range diff {
		a, err := ch.Action()
		if err != nil {
			return nil, fmt.Errorf("gitstate: diff %s: %w", h, err)
		}
		switch a {
		case merkletrie.Insert:
			out = append(out, Change{Path: ch.To.Name, Action: "add"})
		case merkletrie.Delete:
			out = append(out, Change{Path: ch.From.Name, Action: "delete"})
		default:
			out = append(out, Change{Path: ch.To.Name, Action: "modify"})
		}
	}
	return out, nil
}
