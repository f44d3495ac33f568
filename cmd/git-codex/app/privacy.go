package app

import (
	"encoding/json"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// hiddenBody stands in for a mail body an agent may not see in the audit
// trail.
const hiddenBody = "[hidden: mail between others; read your own with `git codex mail read`]"

// forViewer returns the event as viewer may see it in `show` and `log`: an
// agent (viewer != "") does not get the body of mail it neither sent nor
// received from the call's arguments. This is courtesy between agents, not
// secrecy: anyone who can read the repository can read every mail with
// plain git (docs/SECURITY.md). People see everything.
func forViewer(ev gitstate.Event, viewer string) gitstate.Event {
	if viewer == "" || !strings.HasPrefix(ev.Get(gitstate.TrailerTool), "mail_") || ev.Get(gitstate.TrailerActor) == viewer {
		return ev
	}
	trailers := make([]gitstate.Trailer, len(ev.Trailers))
	copy(trailers, ev.Trailers)
	for i, t := range trailers {
		if t.Key != gitstate.TrailerArgs {
			continue
		}
		var args map[string]any
		if json.Unmarshal([]byte(t.Value), &args) != nil {
			trailers[i].Value = hiddenBody // cut short, or not JSON: hide it all
			continue
		}
		if _, ok := args["body"]; !ok || args["to"] == viewer {
			continue
		}
		args["body"] = hiddenBody
		b, _ := json.Marshal(args)
		trailers[i].Value = string(b)
	}
	ev.Trailers = trailers
	return ev
}
