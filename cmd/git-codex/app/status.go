package app

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
	"github.com/urfave/cli/v2"
)

// statusReport is `git codex status --json`.
type statusReport struct {
	Ref         string         `json:"ref"`
	Commit      string         `json:"commit"`
	Clock       gitstate.Clock `json:"clock"`
	LastEvent   string         `json:"last_event"`
	LastEventAt time.Time      `json:"last_event_at"`
	Agents      map[string]int `json:"agents"` // by type
	Caller      string         `json:"caller"`
	Unread      int            `json:"unread"`
}

func (e *env) statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the state's tip, the agents, and your unread mail",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			caller, st, err := e.session(c)
			if err != nil {
				return err
			}
			defer st.Close()
			r := statusReport{Ref: gitstate.RefState, Caller: caller, Agents: map[string]int{}}
			err = st.View(c.Context, func(sn *gitstate.Snapshot) error {
				r.Commit, r.Clock = sn.Commit(), sn.Clock()
				var err error
				r.Agents, r.Unread, err = tools.Summary(sn, caller)
				return err
			})
			if err != nil {
				return tools.StoreError(err)
			}
			ev, err := st.Event(c.Context, r.Commit)
			if err != nil {
				return tools.StoreError(err)
			}
			r.LastEvent, r.LastEventAt = ev.Summary, ev.Time
			if c.Bool("json") {
				return writeJSON(e.stdout, r)
			}
			var types []string
			total := 0
			for t, n := range r.Agents {
				types = append(types, fmt.Sprintf("%s %d", t, n))
				total += n
			}
			sort.Strings(types)
			fmt.Fprintf(e.stdout, "state:  %s at %s (clock %d)\n", r.Ref, r.Commit[:12], r.Clock)
			fmt.Fprintf(e.stdout, "last:   %s (%s)\n", r.LastEvent, e.when(r.LastEventAt))
			fmt.Fprintf(e.stdout, "agents: %d", total)
			if total > 0 {
				fmt.Fprintf(e.stdout, " (%s)", strings.Join(types, ", "))
			}
			fmt.Fprintf(e.stdout, "\nyou:    %s, %d unread mail\n", r.Caller, r.Unread)
			return nil
		},
	}
}
