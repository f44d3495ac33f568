package testscripts

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// historyCommands are the script commands that shape a repository's
// history:
//
//	agehistory DAYS [REF]
//	    rewrites REF (default refs/codex/state) of the repository in the
//	    current directory so that each of its commits is dated DAYS days
//	    earlier, author and committer: the commits git codex wrote, as a
//	    repository that has been in use that long would hold them
//	    (messages, trees and trailers are kept byte for byte; the ids
//	    change). git codex dates its commits by the clock, so a script
//	    cannot make old history by calling it. git fast-export and
//	    fast-import do the rewrite.
func historyCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"agehistory": cmdAgeHistory,
	}
}

func cmdAgeHistory(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! agehistory")
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: agehistory DAYS [REF]")
	}
	days, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("agehistory: DAYS %q is not a number", args[0])
	}
	ref := "refs/codex/state"
	if len(args) == 2 {
		ref = args[1]
	}
	dir := ts.MkAbs(".")
	export := exec.Command("git", "fast-export", "--reencode=no", "--signed-tags=strip", ref)
	export.Dir = dir
	stream, err := export.Output()
	ts.Check(err)
	var shifted bytes.Buffer
	ts.Check(shiftDates(bufio.NewReader(bytes.NewReader(stream)), &shifted, int64(days)*24*3600))
	imp := exec.Command("git", "fast-import", "--quiet", "--force")
	imp.Dir = dir
	imp.Stdin = &shifted
	if out, err := imp.CombinedOutput(); err != nil {
		ts.Fatalf("agehistory: git fast-import: %v\n%s", err, out)
	}
}

// shiftDates copies a fast-export stream, taking by seconds from the time
// of every author and committer line; data blocks are copied unread.
func shiftDates(r *bufio.Reader, w io.Writer, by int64) error {
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		switch {
		case strings.HasPrefix(line, "data "):
			n, convErr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "data ")))
			if convErr != nil {
				return convErr
			}
			io.WriteString(w, line)
			if _, err := io.CopyN(w, r, int64(n)); err != nil {
				return err
			}
			continue
		case strings.HasPrefix(line, "author ") || strings.HasPrefix(line, "committer "):
			// "<who> <email> <seconds> <zone>"
			f := strings.Fields(line)
			if len(f) >= 3 {
				secs, convErr := strconv.ParseInt(f[len(f)-2], 10, 64)
				if convErr == nil {
					head := line[:strings.LastIndex(strings.TrimRight(line, "\n"), f[len(f)-2])]
					line = head + strconv.FormatInt(secs-by, 10) + " " + f[len(f)-1] + "\n"
				}
			}
		}
		io.WriteString(w, line)
		if err == io.EOF {
			return nil
		}
	}
}
