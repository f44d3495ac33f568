package gitstate

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// packLog is "<common dir>/codex/newpacks": the names of the last packs git
// codex writers wrote under the writer lock, oldest first, with a sequence
// number that counts them. Each writer reads it as soon as it holds the
// lock and adds the packs published since its own last turn to its list,
// newest first, so that its first read (the tip's commit, in the previous
// writer's pack) finds them without reading the pack directory. With 16
// writers queued that rescan (listing ~100 files, a stat for each of the
// ~15 new packs) and the lookup that missed before it were ~0.5 ms of a
// ~2.5 ms turn under the lock.
//
// The log is a hint, never trusted for correctness: a pack it names that is
// gone (rolled up by git's repack) fails to open and is skipped, and an
// object in a pack it does not name (git's repack, a fetch, a writer of an
// older version) is not found in the known packs, which reads the directory
// again as before. A torn or foreign log, or one reset since (its id
// changed), or one that moved on by more packs than it keeps, tells the
// reader nothing: it rescans on its first miss, as without the log. So the
// log is written in place with one pwrite, never fsynced, and an older
// version that ignores it loses nothing.
type packLog struct {
	path string
	f    *gitrepo.RawFile // opened lazily, kept for the Store's life
	// id, seq and names are the log as read at the last lock, or as this
	// writer last wrote it; id is "" when it was unreadable.
	id    string
	seq   uint64
	names []string
	// seen is the (id, seq) this process knew the packs up to: the packs
	// it wrote or was told of. Zero seen.seq means never.
	seen struct {
		id  string
		seq uint64
	}
}

// packLogKeep is how many names the log keeps: enough for every other
// writer of a busy repository to have written several packs between two
// turns of one (16 writers write ~15).
const packLogKeep = 64

// packLogMagic starts the log's first line; "end" is its last.
const packLogMagic = "git-codex newpacks"

// open opens the log for reading and writing, creating it if missing.
func (l *packLog) open(shared sharedPerm) error {
	if l.f != nil {
		return nil
	}
	f, err := gitrepo.OpenRaw(l.path, syscall.O_RDWR|syscall.O_CREAT, 0o644)
	if err != nil {
		return err
	}
	shared.applyFd(f.Fd())
	l.f = f
	return nil
}

// news reads the log (the caller holds the writer lock) and returns the
// packs published since this process last knew the list, oldest first: nil
// when there are none, or when the log cannot tell (then the next lookup
// that misses reads the directory, as it would without the log).
func (l *packLog) news(shared sharedPerm) []string {
	l.id, l.seq, l.names = "", 0, nil
	if l.open(shared) != nil {
		return nil
	}
	buf := make([]byte, 64+packLogKeep*(len("pack-")+40+1))
	n, err := l.f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	id, seq, names, ok := parsePackLog(buf[:n])
	if !ok {
		return nil
	}
	l.id, l.seq, l.names = id, seq, names
	prev := l.seen
	l.seen.id, l.seen.seq = id, seq
	if prev.id != id || prev.seq == 0 || prev.seq >= seq || seq-prev.seq > uint64(len(names)) {
		return nil
	}
	return names[len(names)-int(seq-prev.seq):]
}

// publish appends the packs this writer wrote under the lock (pack names,
// "pack-<hash>") to the log, which it read when it took the lock.
func (l *packLog) publish(names []string) {
	if len(names) == 0 || l.f == nil {
		return
	}
	if l.id == "" {
		// a new log: unreadable before (or never written), so no reader
		// may take its numbers for the old one's
		var rnd [8]byte
		rand.Read(rnd[:])
		l.id, l.seq, l.names = hex.EncodeToString(rnd[:]), 0, nil
	}
	l.names = append(l.names, names...)
	l.seq += uint64(len(names))
	if len(l.names) > packLogKeep {
		l.names = l.names[len(l.names)-packLogKeep:]
	}
	var b strings.Builder
	b.WriteString(packLogMagic + " " + l.id + " " + strconv.FormatUint(l.seq, 10) + "\n")
	for _, n := range l.names {
		b.WriteString(n + "\n")
	}
	b.WriteString("end\n")
	if _, err := syscall.Pwrite(l.f.Fd(), []byte(b.String()), 0); err != nil {
		l.id = "" // nothing trustworthy written: the next writer starts anew
		return
	}
	l.seen.id, l.seen.seq = l.id, l.seq
}

// parsePackLog reads the log's text: its header, its names and "end".
// Anything else, a torn write among it, is not a log.
func parsePackLog(b []byte) (id string, seq uint64, names []string, ok bool) {
	text := string(b)
	header, rest, found := strings.Cut(text, "\n")
	if !found {
		return "", 0, nil, false
	}
	f := strings.Fields(strings.TrimPrefix(header, packLogMagic))
	if !strings.HasPrefix(header, packLogMagic+" ") || len(f) != 2 || f[0] == "" {
		return "", 0, nil, false
	}
	seq, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return "", 0, nil, false
	}
	for {
		line, more, found := strings.Cut(rest, "\n")
		if !found {
			return "", 0, nil, false
		}
		if line == "end" {
			break
		}
		h, isPack := strings.CutPrefix(line, "pack-")
		if !isPack || !plumbing.IsHash(h) || len(names) == packLogKeep {
			return "", 0, nil, false
		}
		names = append(names, line)
		rest = more
	}
	if uint64(len(names)) > seq {
		return "", 0, nil, false
	}
	return f[0], seq, names, true
}

func (l *packLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil && !errors.Is(err, fs.ErrClosed) {
		return err
	}
	return nil
}
