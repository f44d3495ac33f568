package ui

import (
	"encoding/json"
	"path"
	"strings"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
)

// kindPart is what /api/state shows of the records under one directory of
// a kind: how many (files named <id>.json: the page reads no record only
// to count it), the newest perKind (by id, ties in path order, as readKind
// orders them) and, for mail, the count per recipient (mail that is not
// JSON is not counted: its recipient is in it).
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

// keptLevels is how deep below a kind's directory the page keeps its
// parts for the next server (gitstate.KeepParts.Depth): every level a
// kind's layout has (mail's records are four names below mail/, in
// directories of ~3 records at a month).
const keptLevels = 8

// keptEvery is how often a running server rewrites its kept parts
// (gitstate.KeepParts.Every): it reduces the tip at every poll of the
// page, and the file is rewritten whole (~4 MB for a month's mail).
const keptEvery = 30 * time.Second

// kindReduction makes kindParts (gitstate.Reduction): a month's state at
// the retention default holds ~63k records, and the page polls
// /api/state; the store remembers each directory's part by tree id, so a
// poll reads only the directories that changed and the newest records'
// bytes. The tip's parts are kept for the next server too
// (gitstate.KeepParts): a server that starts reads only what changed
// since one last ran, where reading every record of a month took seconds
// (issue 27). A past state (not tip) uses them where it has the tip's
// directories, but its own are not kept: the file holds the tip's, which
// the next server shows first.
func kindReduction(kind string, tip bool) gitstate.Reduction {
	r := gitstate.Reduction{
		Name: "ui.kind." + kind,
		// only mail's parts need what a record says: the others are
		// counted by name, and the newest are read after (readState)
		Names: kind != "mail",
		Leaf: func(p string, data []byte) (any, error) {
			name, ok := strings.CutSuffix(path.Base(p), ".json")
			if !ok {
				return kindPart{}, nil // not a record (sync brings in only .json under a kind's directory)
			}
			part := kindPart{count: 1, newest: []recordAt{{name: name, path: p}}}
			if kind != "mail" {
				return part, nil
			}
			var m struct {
				To     string `json:"to"`
				IsRead bool   `json:"is_read"`
			}
			// one pass: Unmarshal checks the syntax before it decodes
			switch err := json.Unmarshal(data, &m); err.(type) {
			case nil:
				part.isMail, part.mailTo, part.mailUnread = true, m.To, !m.IsRead
			case *json.SyntaxError:
				return kindPart{}, nil // as above
			}
			return part, nil
		},
		Join: joinKindParts,
	}
	r.Keep = &gitstate.KeepParts{Encode: encodeKindPart, Decode: decodeKindPart, Depth: keptLevels, Every: keptEvery, ReadOnly: !tip}
	return r
}

// joinKindParts joins parts: counts added, mail counted per recipient,
// and the newest perKind merged from each part's newest, which are in
// order already (a merge, not a sort of them all: a month's ~22k
// directories each join theirs).
func joinKindParts(parts []any) any {
	var out kindPart
	lists := make([][]recordAt, 0, len(parts))
	total := 0
	for _, v := range parts {
		p := v.(kindPart)
		out.count += p.count
		if len(p.newest) > 0 {
			lists = append(lists, p.newest)
			total += len(p.newest)
		}
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
	out.newest = mergeNewest(lists, min(total, perKind))
	return out
}

// mergeNewest takes the first n of lists merged by name, greatest first;
// of equal names, the one in the earlier list first (the order a stable
// sort of the lists one after another gives, and so the order readKind
// gives: the newest perKind of the whole are among each part's newest).
func mergeNewest(lists [][]recordAt, n int) []recordAt {
	switch {
	case n == 0:
		return nil
	case len(lists) == 1:
		return lists[0][:n:n]
	}
	out := make([]recordAt, 0, n)
	for len(out) < n {
		best := -1
		for i, l := range lists {
			if len(l) > 0 && (best < 0 || l[0].name > lists[best][0].name) {
				best = i
			}
		}
		out = append(out, lists[best][0])
		lists[best] = lists[best][1:]
	}
	return out
}
