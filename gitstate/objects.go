package gitstate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// objectStore reads and writes git objects through go-git's filesystem
// storage. The git CLI may repack at any moment (gc writes a new pack,
// deletes the old ones and the loose objects now packed), and go-git keeps
// the pack indexes it loaded: a lookup that fails because an object or pack
// moved is retried after go-git re-reads the list of packs. The Store's
// mutex guards it.
type objectStore struct {
	st  *filesystem.Storage
	dir string // <common dir>/objects, where writeLoose puts new objects
}

// readRetries bounds the re-reads of the pack list for one lookup: a repack
// that finishes between two of them needs another.
const readRetries = 4

func (o *objectStore) read(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := o.st.EncodedObject(t, h)
	for i := 0; err != nil && movedByRepack(err) && i < readRetries; i++ {
		if i > 0 {
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
		}
		o.st.Reindex()
		obj, err = o.st.EncodedObject(t, h)
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("gitstate: read %s %s: %w", t, h, ErrObjectMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("gitstate: read %s %s: %w", t, h, err)
	}
	return obj, nil
}

// movedByRepack reports the errors go-git returns when its view of the
// object directory is out of date: a pack it indexed was deleted
// (ErrPackfileNotFound), or an object it expected loose was packed.
func movedByRepack(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) ||
		errors.Is(err, dotgit.ErrPackfileNotFound) ||
		errors.Is(err, fs.ErrNotExist)
}

func (o *objectStore) blob(h plumbing.Hash) ([]byte, error) {
	obj, err := o.read(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, fmt.Errorf("gitstate: open blob %s: %w", h, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("gitstate: read blob %s: %w", h, err)
	}
	return b, nil
}

func (o *objectStore) tree(h plumbing.Hash) (*object.Tree, error) {
	obj, err := o.read(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t, err := object.DecodeTree(o.st, obj)
	if err != nil {
		return nil, fmt.Errorf("gitstate: decode tree %s: %w", h, err)
	}
	return t, nil
}

func (o *objectStore) commit(h plumbing.Hash) (*object.Commit, error) {
	obj, err := o.read(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	c, err := object.DecodeCommit(o.st, obj)
	if err != nil {
		return nil, fmt.Errorf("gitstate: decode commit %s: %w", h, err)
	}
	return c, nil
}

func (o *objectStore) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := o.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: write blob: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: write blob: %w", err)
	}
	return o.store(obj)
}

// encoder is what go-git's object types implement to serialise themselves.
type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func (o *objectStore) writeObject(v encoder) (plumbing.Hash, error) {
	obj := o.st.NewEncodedObject()
	if err := v.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: encode %T: %w", v, err)
	}
	return o.store(obj)
}

func (o *objectStore) store(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h := obj.Hash()
	err := o.writeLoose(h, obj)
	// the object's "objects/xx/" directory is made before the rename; a
	// concurrent `git prune-packed` may remove it in between.
	for i := 0; err != nil && errors.Is(err, fs.ErrNotExist) && i < 3; i++ {
		err = o.writeLoose(h, obj)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitstate: store %s: %w", obj.Type(), err)
	}
	return h, nil
}

// writeLoose writes obj as a loose object the way git does: compressed into
// a temporary file in the object directory, then renamed to its name. It
// writes objects itself rather than through go-git's SetEncodedObject,
// which leaves its temporary file (and descriptor) behind when a write
// fails, as on a full disk (issue 16 item 12): here every failure removes
// it.
func (o *objectStore) writeLoose(h plumbing.Hash, obj plumbing.EncodedObject) (err error) {
	hex := h.String()
	dir := filepath.Join(o.dir, hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil // content-addressed: already there
	}
	f, err := os.CreateTemp(o.dir, "tmp_obj_")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := objfile.NewWriter(f)
	if err := w.WriteHeader(obj.Type(), obj.Size()); err != nil {
		return err
	}
	r, err := obj.Reader()
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	r.Close()
	if err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o444); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return os.Rename(f.Name(), final)
}
