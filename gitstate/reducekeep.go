package gitstate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// keptFile is where r's parts are kept (KeepParts), "" when its name
// cannot name a file.
func (s *Store) keptFile(r Reduction) string { return s.keptPath(r.Name, ".json") }

// keptPath is the file of this machine's, under .git/codex/reduced/, that
// keeps what name made for the next process (KeepParts, KeepCommits), ""
// when name cannot name a file.
func (s *Store) keptPath(name, ext string) string {
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '-' || c == '_')) {
			return "" // a name that cannot name a file here
		}
	}
	if name == "" {
		return ""
	}
	return filepath.Join(s.commonDir, "codex", "reduced", name+ext)
}

// loadKept reads r's kept parts, once per process, into the store's
// memory as they are in the file: each is decoded only when a Reduce
// meets its tree (keptPart). The file holds the reduced directory's part
// and each subdirectory's, and a state whose directory is unchanged needs
// only the first (at a simulated week, decoding every part of the tasks
// was ~20 ms of each status: issue 27).
func (s *Store) loadKept(r Reduction) {
	m := &s.reduced
	m.mu.Lock()
	done := m.loaded[r.Name]
	if m.loaded == nil {
		m.loaded = map[string]bool{}
	}
	m.loaded[r.Name] = true
	m.mu.Unlock()
	file := s.keptFile(r)
	if done || file == "" {
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return
	}
	var kept map[string]keptFilePart
	if json.Unmarshal(data, &kept) != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.raw == nil {
		m.raw = map[slotKey]rawPart{}
	}
	for dir, kp := range kept {
		if plumbing.IsHash(kp.Tree) {
			m.raw[slotKey{r.Name, dir}] = rawPart{plumbing.NewHash(kp.Tree), kp.Part}
		}
	}
}

// rawPart is a kept part as the file held it, not yet decoded.
type rawPart struct {
	tree plumbing.Hash
	part json.RawMessage
}

// keptPart is the part of dir at tree h that r's kept file held,
// decoded (and then remembered as Reduce's own parts are); ok is false
// when the file held none for that tree or it could not be decoded.
func (s *Store) keptPart(r Reduction, dir string, h plumbing.Hash) (v any, ok bool) {
	m := &s.reduced
	k := slotKey{r.Name, dir}
	m.mu.Lock()
	raw, ok := m.raw[k]
	if ok && raw.tree == h {
		delete(m.raw, k)
	}
	m.mu.Unlock()
	if !ok || raw.tree != h {
		return nil, false
	}
	v, err := r.Keep.Decode(raw.part)
	if err != nil {
		return nil, false
	}
	m.put(r.Name, dir, h, v)
	return v, true
}

// keptFilePart is a directory's part as the kept file holds it.
type keptFilePart struct {
	Tree string          `json:"tree"`
	Part json.RawMessage `json:"part"`
}

// writeKept replaces r's kept parts with parts: those of the state just
// reduced.
func (s *Store) writeKept(r Reduction, parts map[string]keptPart) {
	file := s.keptFile(r)
	if file == "" {
		return
	}
	out := make(map[string]keptFilePart, len(parts))
	for dir, p := range parts {
		b, err := r.Keep.Encode(p.part)
		if err != nil {
			return
		}
		out[dir] = keptFilePart{Tree: p.tree.String(), Part: b}
	}
	data, err := json.Marshal(out)
	if err == nil {
		s.replaceKept(file, data)
	}
}

// replaceKept writes data as a kept file (writeKept, KeptCommits.Save,
// the deep parts): written aside and renamed, so a reader finds the old
// file or the new one whole; two processes that write at once leave one's.
// Readable by all and writable as core.sharedRepository says, as git's own
// files. A file that cannot be written is done without.
func (s *Store) replaceKept(file string, data []byte) {
	shared := s.config().shared
	if shared.mkdirAll(filepath.Dir(file), s.commonDir) != nil {
		return
	}
	removeStaleTemps(file)
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*.tmp")
	if err != nil {
		return
	}
	err = tmp.Chmod(0o644) // as git's own files: others who share the repository may read it
	if err == nil {
		shared.applyFd(int(tmp.Fd())) // and write it, under core.sharedRepository
		_, err = tmp.Write(data)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// staleTemp is how old a kept file's temporary file is when no writer is
// still writing it (a write takes milliseconds).
const staleTemp = 10 * time.Minute

// removeStaleTemps removes the temporary files of file that a process
// killed while it wrote them left behind (the page's kept mail parts are
// ~11 MB at a month): each write would otherwise leave one more.
func removeStaleTemps(file string) {
	temps, _ := filepath.Glob(file + ".*.tmp")
	for _, t := range temps {
		if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) > staleTemp {
			os.Remove(t)
		}
	}
}
