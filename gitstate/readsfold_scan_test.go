package gitstate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMayHoldReadFindsWhatFoldReadsWrote: a fold's lines as FoldReads
// writes them are found by any prefix of their commit id and only by it,
// so looking up one read (show <id>, the page's older events) parses only
// the folds that hold it; lines written some other way are parsed whole.
func TestMayHoldReadFindsWhatFoldReadsWrote(t *testing.T) {
	ids := []string{"0123456789abcdef0123456789abcdef01234567", "89abcdef0123456789abcdef0123456789abcdef"}
	var lines []string
	for _, id := range ids {
		b, err := json.Marshal(FoldedRead{Commit: id, Author: "w00 <w00@codex>", Time: time.Unix(0, 0).UTC(), Message: "read\n\nCodex-Tool: mail_list_inbox\n"})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	for _, rev := range []string{"0123", "89abcdef01", ids[0], ids[1]} {
		if !mayHoldRead(data, rev) {
			t.Errorf("%s: not found in %s", rev, data)
		}
	}
	for _, rev := range []string{"4567", "abcd", "ffff0123"} {
		if mayHoldRead(data, rev) {
			t.Errorf("%s: found in a fold that does not hold it", rev)
		}
	}
	if spaced := []byte(`{"commit": "` + ids[0] + `"}`); !mayHoldRead(spaced, "ffff") {
		t.Error("a fold written another way was not left to be parsed whole")
	}
	if got := parseFold(data); len(got) != 2 || got[1].Hash.String() != ids[1] || got[1].ParentHashes[0].String() != ids[0] {
		t.Errorf("parseFold: %v", got)
	}
}
