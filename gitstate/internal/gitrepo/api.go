package gitrepo

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrObjectMissing means an object is not in the object database (nor
// any alternate, nor reachable through git).
var ErrObjectMissing = errors.New("object missing from the repository")

// Storage is what the store needs of a repository's objects and refs.
// *Repo implements it; the test suite (storage_test.go) is written
// against it.
type Storage interface {
	// Read returns the content of h, which must be an object of type t.
	// A missing object, or one of another type, is ErrObjectMissing.
	Read(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error)
	// Has fails unless h is in the object database (ErrObjectMissing
	// when it is not).
	Has(h plumbing.Hash) error
	// Write stores the batch's objects, as one pack.
	Write(b *Batch) error
	// ReadRef reads a loose or packed ref; ok is false when it is neither.
	ReadRef(name string) (h plumbing.Hash, ok bool, err error)
}

// Repo is the objects and refs of one repository's common git dir. It is
// not safe for concurrent use: the store guards it.
type Repo struct {
	*Objects
	dir     string
	shallow shallowFile // the shallow file as last read (Shallow)
}

var _ Storage = (*Repo)(nil)

// Open returns the objects and refs of the repository whose common git
// dir is commonDir. New packs are staged in tmpDir before they are renamed
// into objects/pack. Nothing is read until it is asked for.
func Open(commonDir, tmpDir string) *Repo {
	o := &Objects{dir: filepath.Join(commonDir, "objects"), tmpDir: tmpDir, phase: func(string) {}}
	return &Repo{Objects: o, dir: commonDir}
}

// ReadRef reads the ref name of the repository (see the function ReadRef).
func (r *Repo) ReadRef(name string) (plumbing.Hash, bool, error) { return ReadRef(r.dir, name) }

// Batch is the new objects of one transaction or merge, written as one
// pack by Objects.Write. (packwrite.go calls it objectBatch.)
type Batch = objectBatch

// Add adds an object of type t with content data to the batch and returns
// its hash.
func (b *objectBatch) Add(t plumbing.ObjectType, data []byte) plumbing.Hash { return b.add(t, data) }

// FsyncPolicy says which files of a pack write are fsynced (core.fsync's
// "pack" and "pack-metadata").
type FsyncPolicy struct{ pack, packMetadata bool }

// fsyncPolicy is FsyncPolicy under the name packwrite.go knows it by.
type fsyncPolicy = FsyncPolicy

// Fsync is the policy that fsyncs packs (pack) and their indexes
// (packMetadata).
func Fsync(pack, packMetadata bool) FsyncPolicy {
	return FsyncPolicy{pack: pack, packMetadata: packMetadata}
}

// Configure sets how new packs are written: which files are fsynced, and
// the modes of core.sharedRepository.
func (o *Objects) Configure(sync FsyncPolicy, shared SharedPerm) {
	o.sync, o.shared = sync, shared
}

// SetPhase installs fn to be told of the stages of writing a pack (the
// store's benchmarks time them).
func (o *Objects) SetPhase(fn func(string)) { o.phase = fn }

// Rescan forgets the list of packs and reads the pack directory again
// (after git repacked).
func (o *Objects) Rescan() error {
	o.scanned = false
	return o.scan()
}

// TypeOf returns the type of the object h, whatever it is.
func (o *Objects) TypeOf(h plumbing.Hash) (plumbing.ObjectType, error) {
	v, err := o.anyType(h)
	return v.typ, err
}

// Stat returns the type and size of the object h, whatever it is, from
// one lookup: a check of an incoming file's size and type (checkShape)
// looked it up twice.
func (o *Objects) Stat(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	v, err := o.anyType(h)
	return v.typ, int64(len(v.data)), err
}

// PackCounts says how many of the packs known are open (their index
// read): packs are opened when an object is looked up in them.
func (o *Objects) PackCounts() (opened, known int) {
	for _, p := range o.packs {
		if p.opened() {
			opened++
		}
	}
	return opened, len(o.packs)
}

// WriteFileRaw creates name (failing if it exists) holding data, fsynced
// if sync, and returns its inode number.
func WriteFileRaw(name string, perm uint32, data []byte, sync bool) (ino uint64, err error) {
	return writeFileRaw(name, perm, data, sync)
}

// Told makes a pack another writer just wrote (named in the store's pack
// log) known without a scan, as the newest; its object count is learnt
// when a lookup opens it.
func (o *Objects) Told(name string) { o.added(name, 0) }

// KeptPacks names the packs this writer wrote and still protects with a
// .keep (those ReleaseKeeps will release), for the store's pack log.
func (o *Objects) KeptPacks() []string {
	if len(o.keeps) == 0 {
		return nil
	}
	names := make([]string, len(o.keeps))
	for i, k := range o.keeps {
		names[i] = strings.TrimSuffix(filepath.Base(k), ".keep")
	}
	return names
}

// RawFile is a file read and written with raw system calls (no Go
// runtime poller), as the pack writer uses them.
type RawFile = rawFile

// OpenRaw opens name with flag and perm as open(2) does.
func OpenRaw(name string, flag int, perm uint32) (*RawFile, error) { return openRaw(name, flag, perm) }

// Fd is the file's descriptor.
func (f *rawFile) Fd() int { return f.fd }
