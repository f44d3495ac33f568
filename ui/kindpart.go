package ui

import (
	"encoding/json"
	"path"
	"sort"
	"strings"

	"github.com/gitcodex/git-codex/gitstate"
)

// kindPart is what /api/state shows of the records under one directory of
// a kind: how many, the newest perKind (by id, ties in path order, as
// readKind orders them) and, for mail, the count per recipient.
type kindPart struct {
	count  int
	newest []recordAt
	mail   map[string]mailCount
	// one mail record's recipient and read flag (a leaf's part)
	mailTo     string
	mailUnread bool
	isMail     bool
}

// recordAt names a record without its bytes: the newest are read once the
// parts are joined.
type recordAt struct {
	name string // the id: the file name without .json
	path string
}

// kindReduction makes kindParts (gitstate.Reduction): a month's state at
// the retention default holds ~63k records, and the page polls
// /api/state; the store remembers each directory's part by tree id, so a
// poll reads only the directories that changed and the newest records'
// bytes.
func kindReduction(kind string) gitstate.Reduction {
	return gitstate.Reduction{
		Name: "ui.kind." + kind,
		Leaf: func(p string, data []byte) (any, error) {
			if !json.Valid(data) {
				return kindPart{}, nil // not a record the page can show (a newer version's file)
			}
			part := kindPart{count: 1, newest: []recordAt{{name: strings.TrimSuffix(path.Base(p), ".json"), path: p}}}
			if kind == "mail" {
				var m struct {
					To     string `json:"to"`
					IsRead bool   `json:"is_read"`
				}
				if json.Unmarshal(data, &m) == nil {
					part.isMail, part.mailTo, part.mailUnread = true, m.To, !m.IsRead
				}
			}
			return part, nil
		},
		Join: func(parts []any) any {
			var out kindPart
			for _, v := range parts {
				p := v.(kindPart)
				out.count += p.count
				out.newest = append(out.newest, p.newest...)
				if !p.isMail && p.mail == nil {
					continue
				}
				if out.mail == nil {
					out.mail = map[string]mailCount{}
				}
				if p.isMail {
					c := out.mail[p.mailTo]
					c.Total++
					if p.mailUnread {
						c.Unread++
					}
					out.mail[p.mailTo] = c
				}
				for to, pc := range p.mail {
					c := out.mail[to]
					c.Total += pc.Total
					c.Unread += pc.Unread
					out.mail[to] = c
				}
			}
			// each part's newest are in order already: a stable sort keeps
			// ties in path order, and the newest perKind of the whole are
			// among the newest perKind of its parts
			sort.SliceStable(out.newest, func(i, j int) bool { return out.newest[i].name > out.newest[j].name })
			if len(out.newest) > perKind {
				out.newest = out.newest[:perKind:perKind]
			}
			return out
		},
	}
}
