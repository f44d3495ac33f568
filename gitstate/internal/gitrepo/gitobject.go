package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// The store reads and writes two kinds of git object besides blobs: trees
// and commits. It encodes and decodes them itself, in git's format, rather
// than with go-git's plumbing/object: that package links OpenPGP, elliptic
// curve and diff libraries (commit signing, patches) whose package
// initialisation every git codex process paid for at start, though the store
// never signs or diffs a commit.

// Tree is a tree object: its entries in git's order (see SortTreeEntries).
type Tree struct {
	Hash    plumbing.Hash // set when read
	Entries []TreeEntry
}

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// Signature is a commit's author or committer.
type Signature struct {
	Name, Email string
	When        time.Time
}

// Commit is a commit object. Headers the store has no use for (encoding,
// gpgsig, mergetag...) are skipped when reading; the store never writes them.
type Commit struct {
	Hash         plumbing.Hash // set when read
	TreeHash     plumbing.Hash
	ParentHashes []plumbing.Hash
	Author       Signature
	Committer    Signature
	Message      string
	// Shallow is set when the repository's shallow file lists the commit
	// (Repo.Commit): its parents were never fetched, and walks stop here
	// (Parents), as git's do.
	Shallow bool
}

var (
	errMalformedTree   = errors.New("malformed tree")
	errMalformedCommit = errors.New("malformed commit")
)

// Find binary-searches the tree's entries for name; nil if it has none. Git sorts a directory "x" as
// if it were named "x/", so the name is looked up under both keys.
func (t *Tree) Find(name string) *TreeEntry {
	n := len(t.Entries)
	for _, key := range [2]string{name, name + "/"} {
		i := sort.Search(n, func(i int) bool { return t.Entries[i].sortName() >= key })
		if i < n && t.Entries[i].sortName() == key {
			return &t.Entries[i]
		}
	}
	return nil
}

// sortName is the name git sorts a tree entry by: a directory's as if it
// ended in "/".
func (e *TreeEntry) sortName() string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// SortTreeEntries puts entries in git's order.
func SortTreeEntries(es []TreeEntry) {
	sort.Slice(es, func(i, j int) bool { return es[i].sortName() < es[j].sortName() })
}

// encode serialises the tree as git does: "<octal mode> <name>\0<20-byte
// hash>" per entry. Entries must be sorted, with names free of NUL and '/'.
func (t *Tree) encode() ([]byte, error) {
	var b bytes.Buffer
	for i := range t.Entries {
		e := &t.Entries[i]
		if e.Name == "" || strings.ContainsAny(e.Name, "\x00/") {
			return nil, fmt.Errorf("%w: entry name %q", errMalformedTree, e.Name)
		}
		if i > 0 && t.Entries[i-1].sortName() >= e.sortName() {
			return nil, fmt.Errorf("%w: entries out of order at %q", errMalformedTree, e.Name)
		}
		b.WriteString(strconv.FormatUint(uint64(e.Mode), 8))
		b.WriteByte(' ')
		b.WriteString(e.Name)
		b.WriteByte(0)
		b.Write(e.Hash[:])
	}
	return b.Bytes(), nil
}

// decodeTree parses a tree object's content. Modes are read as git reads
// them, canonicalised (a "100664" file is a regular file).
func decodeTree(data []byte) (*Tree, error) {
	t := &Tree{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("%w: missing mode terminator", errMalformedTree)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: mode %q", errMalformedTree, data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 {
			return nil, fmt.Errorf("%w: missing name terminator", errMalformedTree)
		}
		if nul == 0 {
			return nil, fmt.Errorf("%w: empty name", errMalformedTree)
		}
		name := string(data[:nul])
		data = data[nul+1:]
		if len(data) < len(plumbing.ZeroHash) {
			return nil, fmt.Errorf("%w: truncated object id", errMalformedTree)
		}
		var h plumbing.Hash
		copy(h[:], data)
		data = data[len(h):]
		t.Entries = append(t.Entries, TreeEntry{Name: name, Mode: canonicalMode(filemode.FileMode(mode)), Hash: h})
	}
	return t, nil
}

// canonicalMode is the mode git gives an entry whatever was written: the
// type bits decide (git's canon_mode).
func canonicalMode(m filemode.FileMode) filemode.FileMode {
	switch m & 0o170000 {
	case 0o040000:
		return filemode.Dir
	case 0o100000:
		if m&0o111 != 0 {
			return filemode.Executable
		}
		return filemode.Regular
	case 0o120000:
		return filemode.Symlink
	case 0o160000:
		return filemode.Submodule
	}
	return m
}

// encode serialises the commit as git does (and as go-git did, so commits
// written before this codec are reproduced byte for byte).
func (c *Commit) encode() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("tree " + c.TreeHash.String() + "\n")
	for _, p := range c.ParentHashes {
		b.WriteString("parent " + p.String() + "\n")
	}
	b.WriteString("author ")
	c.Author.encode(&b)
	b.WriteString("\ncommitter ")
	c.Committer.encode(&b)
	b.WriteString("\n\n")
	b.WriteString(c.Message)
	return b.Bytes(), nil
}

// encode writes "Name <email> <unix seconds> <+hhmm>".
func (s *Signature) encode(b *bytes.Buffer) {
	u := s.When.Unix()
	if u < 0 {
		u = 0
	}
	b.WriteString(s.Name + " <" + s.Email + "> " + strconv.FormatInt(u, 10) + " " + s.When.Format("-0700"))
}

// decodeCommit parses a commit object's content: its tree, parents, author
// and committer headers and its message; other headers (and their
// continuation lines) are skipped.
func decodeCommit(data []byte) (*Commit, error) {
	c := &Commit{}
	sawTree := false
	for {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 { // headers only, no message
			nl = len(data)
		}
		line := data[:nl]
		data = data[min(nl+1, len(data)):]
		if len(line) == 0 {
			break
		}
		key, value, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			h, ok := parseHash(value)
			if !ok {
				return nil, fmt.Errorf("%w: tree %q", errMalformedCommit, value)
			}
			c.TreeHash, sawTree = h, true
		case "parent":
			h, ok := parseHash(value)
			if !ok {
				return nil, fmt.Errorf("%w: parent %q", errMalformedCommit, value)
			}
			c.ParentHashes = append(c.ParentHashes, h)
		case "author":
			c.Author = decodeSignature(value)
		case "committer":
			c.Committer = decodeSignature(value)
		}
		if len(data) == 0 {
			break
		}
	}
	if !sawTree {
		return nil, fmt.Errorf("%w: missing tree header", errMalformedCommit)
	}
	c.Message = string(data)
	return c, nil
}

func parseHash(b []byte) (plumbing.Hash, bool) {
	if len(b) != 40 || !plumbing.IsHash(string(b)) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(string(b)), true
}

// decodeSignature reads "Name <email> <seconds> <zone>" leniently, as git
// and go-git do: whatever cannot be read stays zero.
func decodeSignature(b []byte) Signature {
	var s Signature
	open, end := bytes.LastIndexByte(b, '<'), bytes.LastIndexByte(b, '>')
	if open < 0 || end < open {
		return s
	}
	s.Name = string(bytes.Trim(b[:open], " "))
	s.Email = string(b[open+1 : end])
	rest := b[min(end+2, len(b)):]
	if end+2 >= len(b) {
		return s
	}
	secs, zone, _ := bytes.Cut(rest, []byte{' '})
	ts, err := strconv.ParseInt(string(secs), 10, 64)
	if err != nil {
		return s
	}
	s.When = time.Unix(ts, 0).In(time.UTC)
	if len(zone) < 5 {
		return s
	}
	hours, err1 := strconv.ParseInt(string(zone[0:3]), 10, 64)
	mins, err2 := strconv.ParseInt(string(zone[3:5]), 10, 64)
	if err1 != nil || err2 != nil {
		return s
	}
	if hours < 0 || zone[0] == '-' {
		mins = -mins
	}
	s.When = s.When.In(time.FixedZone("", int(hours*3600+mins*60)))
	return s
}
