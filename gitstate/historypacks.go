package gitstate

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// A geometric repack walks history: `git pack-objects --stdin-packs`
// starts a walk, for the names that guide its delta search, from every
// commit in the packs it rolls up, and git (2.39 to today) adds a commit's
// parents before it skips a commit of a pack it leaves alone, so the walk
// goes through the whole history behind them. From a state commit it goes
// through every state commit there is: measured on a month's simulated
// team, 0.13 s at 92k state commits and growing with them, once every
// repackAt packs. A read writes a pack of one object, its commit, whose
// parent is the previous read of the machine's day: a walk from it ends at
// the day's first read. Reads are most calls (93 % of the simulated
// team's), so most repacks rolled up a write or two beside thirty reads
// and walked the whole history for them.
//
// So the store lists, in "<common dir>/codex/", the packs it wrote:
// readpacks those of one object (a read's commit), historypacks the others
// (a change's commit and trees, a merge, an archive). Each round of a
// background repack (backgroundScript) reads both lists first. While fewer
// than historyBatch of the packs historypacks names are there, the round
// rolls up only the packs known to hold reads, and leaves every other pack
// out with git's own `--keep-pack` (nothing is written into the pack
// directory and nothing is kept from a person's `git gc`): it walks a day
// of reads at most, and the pack it makes holds reads only, so it is
// listed in readpacks in turn. Once historyBatch of them are there, or the
// packs left out would be most of the repackAt that start a repack, the
// round rolls up everything, as before, walking the history once for all
// of them, and empties both lists. The packs in the directory stay under
// repackAt all along: the rounds start as before, at repackAt packs.
//
// The lists are hints, appended to under the writer lock before the
// packs' .keep is removed (so a repack never finds a pack of ours that is
// not listed yet), never fsynced: a name lost (a torn write, a rewrite
// racing an append) only lets the pack wait, left out of reads' rounds,
// for the next round that rolls up everything; a name of a pack gone
// (rolled up by a person's `git gc`) is not counted and is dropped by the
// next round, which rewrites the list in place. A pack the store did not
// write (a fetch's, git's own) is in neither list and waits like a change's.
const (
	historyPacksFile = "historypacks"
	readPacksFile    = "readpacks"
	historyBatch     = 16
)

// notePacks appends the packs a transaction wrote to the lists; the
// caller holds the writer lock.
func (s *Store) notePacks(packs []gitrepo.WrittenPack, shared sharedPerm) {
	var reads, history []string
	for _, p := range packs {
		if p.Objects == 1 {
			reads = append(reads, p.Name)
		} else {
			history = append(history, p.Name)
		}
	}
	s.appendPackList(readPacksFile, reads, shared)
	s.appendPackList(historyPacksFile, history, shared)
}

func (s *Store) appendPackList(file string, names []string, shared sharedPerm) {
	if len(names) == 0 {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.commonDir, "codex", file), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	shared.applyFd(int(f.Fd()))
	f.WriteString(strings.Join(names, "\n") + "\n")
	f.Close()
}
