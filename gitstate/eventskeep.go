package gitstate

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"sort"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// KeptCommits walks history (EventsOf) reading each commit's bytes from a
// file of this machine's when a previous process kept them there, and
// keeps what this one read for the next: .git/codex/reduced/<name>.commits.
// `git codex status` counts the unauthenticated calls among the newest
// 1,000 of the state and the reads refs, and reading those commits from
// the packs (an index lookup, an inflate each, in packs of hundreds of
// thousands of objects at a week) was half of its time (issue 27); between
// two statuses most of the window is the same commits. A commit id names
// its content, so what is kept is never stale: each entry is checked
// against its id when the file is read (a file that is not one, or an
// entry whose bytes are not its id's, is done without), and the walk is
// EventsOf's own, so it shows exactly what EventsOf shows. The file holds
// the commits of the last process's walks only, so it stays the size of
// one window. A KeptCommits is for one goroutine's walks, then Save.
type KeptCommits struct {
	s    *Store
	file string
	kept map[plumbing.Hash][]byte // what the file held
	used map[plumbing.Hash][]byte // what this process's walks read
	// missed says a walk read a commit the file did not hold: the file
	// is replaced on Save.
	missed  bool
	shallow gitrepo.Shallow
	readSh  bool // shallow is read (once for all the walks)
}

// keptCommitsHeader starts a kept commits file: what it is, and its
// format's version.
const keptCommitsHeader = "git-codex kept commits 1\n"

// KeepCommits reads the commits kept under name (lower-case letters,
// digits, '.', '-', '_'; a name that cannot name a file keeps nothing).
func (s *Store) KeepCommits(name string) *KeptCommits {
	k := &KeptCommits{s: s, file: s.keptPath(name, ".commits"), kept: map[plumbing.Hash][]byte{}, used: map[plumbing.Hash][]byte{}}
	if k.file == "" {
		return k
	}
	data, err := os.ReadFile(k.file)
	if err != nil || !bytes.HasPrefix(data, []byte(keptCommitsHeader)) {
		return k
	}
	data = data[len(keptCommitsHeader):]
	for len(data) > 0 {
		// an entry: the commit id, its content's length (uvarint), its content
		if len(data) < len(plumbing.ZeroHash) {
			return k
		}
		var h plumbing.Hash
		copy(h[:], data)
		data = data[len(h):]
		n, w := binary.Uvarint(data)
		if w <= 0 || n > uint64(len(data)-w) {
			return k
		}
		content := data[w : w+int(n) : w+int(n)]
		data = data[w+int(n):]
		if commitID(content) == h {
			k.kept[h] = content
		}
	}
	return k
}

// commitID is the id of the commit whose content is data. crypto/sha1, not
// the collision-detecting SHA-1 git and go-git name objects with: it
// checks bytes this machine wrote against the id they were read by, at
// half the cost, and a kept file is read at every status.
func commitID(data []byte) plumbing.Hash {
	d := sha1.New()
	d.Write(strconv.AppendInt([]byte("commit "), int64(len(data)), 10))
	d.Write([]byte{0})
	d.Write(data)
	var h plumbing.Hash
	d.Sum(h[:0])
	return h
}

// EventsOf is Store.EventsOf reading its commits through k.
func (k *KeptCommits) EventsOf(ctx context.Context, revs []string, fn func(Event) bool) error {
	return k.s.walkEvents(ctx, revs, k.read, fn)
}

// read is readCommit through k.
func (k *KeptCommits) read(h plumbing.Hash) (*gitrepo.Commit, error) {
	if !k.readSh {
		set, err := k.s.shallowSet()
		if err != nil {
			return nil, err
		}
		k.shallow, k.readSh = set, true
	}
	data, ok := k.used[h]
	if !ok {
		data, ok = k.kept[h]
	}
	if !ok {
		var err error
		if data, err = k.s.readRaw(plumbing.CommitObject, h); err != nil {
			return nil, err
		}
		k.missed = true
	}
	k.used[h] = data
	return gitrepo.CommitOf(h, data, k.shallow)
}

// Save replaces the file with the commits this process's walks read, when
// they read one it did not hold. A file that cannot be written is done
// without.
func (k *KeptCommits) Save() {
	if k.file == "" || !k.missed {
		return
	}
	ids := make([]plumbing.Hash, 0, len(k.used))
	size := len(keptCommitsHeader)
	for h, data := range k.used {
		ids = append(ids, h)
		size += len(h) + binary.MaxVarintLen64 + len(data)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	out := make([]byte, 0, size)
	out = append(out, keptCommitsHeader...)
	for _, h := range ids {
		out = append(out, h[:]...)
		out = binary.AppendUvarint(out, uint64(len(k.used[h])))
		out = append(out, k.used[h]...)
	}
	k.s.replaceKept(k.file, out)
}
