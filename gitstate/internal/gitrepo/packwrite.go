package gitrepo

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// objectBatch holds the objects a transaction or a merge creates until they
// are written, all at once, as one pack.
type objectBatch struct {
	objs []rawObject
	seen map[plumbing.Hash]bool
}

// rawObject is a git object's type and content (without git's header).
type rawObject struct {
	hash plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

// add records an object and returns its hash; adding the same object twice
// stores it once.
func (b *objectBatch) add(typ plumbing.ObjectType, data []byte) plumbing.Hash {
	h := plumbing.ComputeHash(typ, data)
	if b.seen == nil {
		b.seen = map[plumbing.Hash]bool{}
	}
	if !b.seen[h] {
		b.seen[h] = true
		b.objs = append(b.objs, rawObject{hash: h, typ: typ, data: data})
	}
	return h
}

// encodePack serialises objs as a version 2 pack of whole (undeltified)
// objects and its version 2 index, as git writes them. The pack's name is
// its trailing checksum.
func encodePack(t *deflateTable, objs []rawObject) (pack, idx []byte, sum plumbing.Hash, err error) {
	var p bytes.Buffer
	p.WriteString("PACK")
	binary.Write(&p, binary.BigEndian, uint32(2))
	binary.Write(&p, binary.BigEndian, uint32(len(objs)))
	type entry struct {
		hash   plumbing.Hash
		offset uint64
		crc    uint32
	}
	entries := make([]entry, len(objs))
	for i, o := range objs {
		start := p.Len()
		size := uint64(len(o.data))
		c := byte(o.typ)<<4 | byte(size&0x0f)
		size >>= 4
		for size != 0 {
			p.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
			size >>= 7
		}
		p.WriteByte(c)
		if len(o.data) <= storeMax {
			writeStored(&p, o.data)
		} else {
			writeDeflated(&p, t, o.data)
		}
		entries[i] = entry{o.hash, uint64(start), crc32.ChecksumIEEE(p.Bytes()[start:])}
	}
	packSum := sha1.Sum(p.Bytes())
	p.Write(packSum[:])

	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].hash[:], entries[j].hash[:]) < 0 })
	var x bytes.Buffer
	x.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fanout [256]uint32
	for _, e := range entries {
		for b := int(e.hash[0]); b < 256; b++ {
			fanout[b]++
		}
	}
	binary.Write(&x, binary.BigEndian, fanout)
	for _, e := range entries {
		x.Write(e.hash[:])
	}
	for _, e := range entries {
		binary.Write(&x, binary.BigEndian, e.crc)
	}
	var large []uint64
	for _, e := range entries {
		if e.offset < 1<<31 {
			binary.Write(&x, binary.BigEndian, uint32(e.offset))
			continue
		}
		binary.Write(&x, binary.BigEndian, uint32(len(large))|1<<31)
		large = append(large, e.offset)
	}
	for _, o := range large {
		binary.Write(&x, binary.BigEndian, o)
	}
	x.Write(packSum[:])
	idxSum := sha1.Sum(x.Bytes())
	x.Write(idxSum[:])
	return p.Bytes(), x.Bytes(), plumbing.Hash(packSum), nil
}

// storeMax is the size up to which an object is stored in its pack
// without compression (a zlib stream of deflate's stored blocks, which git
// reads like any other). Most of a transaction's objects are small records,
// trees and the commit, where deflate saves a few hundred bytes at most and
// building its Huffman codes was most of the cost of encoding the pack;
// larger objects are compressed (writeDeflated).
const storeMax = 1024

// writeStored appends data to b as a zlib stream of stored deflate blocks.
func writeStored(b *bytes.Buffer, data []byte) {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	b.Write([]byte{0x78, 0x01}) // deflate, 32 KiB window, no dictionary, check bits
	for {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		b.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		b.Write(data[:n])
		data = data[n:]
		if final == 1 {
			break
		}
	}
	b.Write(sum[:])
}

// writePack writes objs into "<objects>/pack" the way git's receive-pack
// does with an incoming pack: the pack and its index each written under a
// temporary name, fsynced when git's core.fsync asks for it (git's default
// does) and renamed into place, the pack before its index, so git and
// other readers see either no pack or a complete one; and, before either
// is renamed, a ".keep" file, so that no repack deletes the pack while the
// ref that will name its objects has not moved yet (a repack lists the
// packs without a .keep and deletes them once it has packed what is
// reachable). The caller removes the .keep (see Store.releaseKeeps) once
// the ref has moved, or the transaction failed. It returns the pack's name
// ("pack-<checksum>") and the .keep's path. t is the compressor's table,
// reused for every object over storeMax (deflate.go).
//
// The caller holds the writer lock, which every other writer is waiting
// for, so the two fsyncs run at once (the index's in a goroutine, the
// pack's here) once both files and the .keep are created: the disk then
// serves their writes and cache flushes together (a journalled filesystem
// commits both in one journal commit), where one after the other each
// waited for the other. On the benchmarks' VM (ext4 without a journal) a
// single writer's transaction went from p50 8.5–13 ms to 3–7 ms under
// load; what was tried beside it (the pack's fsync started as soon as it
// was written, or sync_file_range on the index before two fsyncs in a
// row) measured no better. Durability is git's all the same: nothing is
// renamed into objects/pack before both fsyncs have returned, and the ref
// moves after that.
func writePack(t *deflateTable, objectsDir, tmpDir string, objs []rawObject, sync fsyncPolicy, shared sharedPerm, phase func(string)) (name, keep string, err error) {
	pack, idx, sum, err := encodePack(t, objs)
	if err != nil {
		return "", "", fmt.Errorf("gitstate: encode pack: %w", err)
	}
	phase("encoded")
	dir := filepath.Join(objectsDir, "pack")
	name = "pack-" + sum.String()
	keep = filepath.Join(dir, name+".keep")
	files := []*tempFile{
		{prefix: "tmp_pack_", ext: ".pack", data: pack, sync: sync.pack},
		{prefix: "tmp_idx_", ext: ".idx", data: idx, sync: sync.packMetadata},
	}
	in := tmpDir
	if in == "" {
		in = dir
	}
	kept := false // the .keep is ours to remove if the pack fails
	defer func() {
		for _, f := range files {
			f.discard()
		}
		if err != nil && kept {
			os.Remove(keep)
		}
	}()
	for _, f := range files {
		if err := f.write(in, shared); err != nil {
			return "", "", fmt.Errorf("gitstate: write %s%s: %w", name, f.ext, err)
		}
	}
	if err := writeKeep(dir, keep, shared); err != nil {
		return "", "", fmt.Errorf("gitstate: write %s.keep: %w", name, err)
	}
	kept = true
	phase("keep")
	files[1].startSync() // the pack's runs here, beside it (wait)
	for _, f := range files {
		if err := f.wait(); err != nil {
			return "", "", fmt.Errorf("gitstate: write %s%s: %w", name, f.ext, err)
		}
	}
	phase("synced")
	for _, f := range files {
		target := filepath.Join(dir, name+f.ext)
		err := f.rename(target)
		if err != nil && (errors.Is(err, syscall.EXDEV) || errors.Is(err, errTmpGone)) {
			// tmpDir is on another filesystem, or git's prune took the
			// file from objects/pack: written again there, as before
			err = writeRename("", dir, f.prefix, target, f.data, f.sync, shared)
		}
		if err != nil {
			return "", "", fmt.Errorf("gitstate: write %s%s: %w", name, f.ext, err)
		}
		phase(f.ext)
	}
	return name, keep, nil
}

// tempFile is one of a pack's two files on its way into objects/pack:
// written under a temporary name, fsynced in a goroutine beside the
// other's fsync (see writePack), then renamed.
type tempFile struct {
	prefix, ext string
	data        []byte
	sync        bool
	path        string     // the temporary file, "" once renamed or removed
	fd          *rawFile   // open until its fsync starts
	done        chan error // the fsync's result (nil without one)
}

// write creates the temporary file in dir (created if missing, as
// objects/pack may be in a new repository), leaving it open for its fsync
// when it needs one.
func (f *tempFile) write(dir string, shared sharedPerm) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	path := filepath.Join(dir, f.prefix+hex.EncodeToString(rnd[:]))
	rf, err := createRaw(path, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		// objects/pack or codex/tmp: below the common dir
		if err := shared.mkdirAll(dir, filepath.Dir(filepath.Dir(dir))); err != nil {
			return err
		}
		rf, err = createRaw(path, 0o444)
	}
	if err != nil {
		return err
	}
	f.path = path
	_, err = rf.Write(f.data)
	if err == nil {
		shared.applyFd(rf.fd)
	}
	if err != nil || !f.sync {
		if cerr := rf.Close(); err == nil {
			err = cerr
		}
		return err
	}
	f.fd = rf
	return nil
}

// startSync starts the file's fsync in a goroutine.
func (f *tempFile) startSync() {
	rf := f.fd
	if rf == nil {
		return
	}
	f.fd = nil
	f.done = make(chan error, 1)
	go func() {
		err := rf.Sync()
		if cerr := rf.Close(); err == nil {
			err = cerr
		}
		f.done <- err
	}()
}

// wait returns the result of the file's fsync, once it is over; one not
// started in a goroutine runs here.
func (f *tempFile) wait() error {
	if rf := f.fd; rf != nil {
		f.fd = nil
		err := rf.Sync()
		if cerr := rf.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if f.done == nil {
		return nil
	}
	err := <-f.done
	f.done = nil
	return err
}

// rename moves the written (and fsynced) file to target.
func (f *tempFile) rename(target string) error {
	err := os.Rename(f.path, target)
	if err == nil {
		f.path = ""
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Dir(target)); serr == nil {
			return fmt.Errorf("%w: %v", errTmpGone, err)
		}
	}
	return err
}

// discard waits for a fsync still running and removes the temporary file
// if it was not renamed.
func (f *tempFile) discard() {
	if f.fd != nil {
		f.fd.Close()
		f.fd = nil
	}
	f.wait()
	if f.path != "" {
		os.Remove(f.path)
		f.path = ""
	}
}

// keepPrefix starts the content of the .keep files git codex writes, as
// "receive-pack" starts receive-pack's: the rest names the process, so that
// a keep left by a writer that died before removing it can be told from a
// live one's (see sweepKeeps).
const keepPrefix = "git-codex"

// writeKeep creates the .keep file of a pack about to be written. The
// caller holds the writer lock, so a git codex keep that is there already
// (the very same pack written before by a writer that died before removing
// it) is stale and taken over; anyone else's keep is not ours to remove
// later, and writing fails.
func writeKeep(dir, keep string, shared sharedPerm) error {
	host, _ := os.Hostname()
	msg := []byte(fmt.Sprintf("%s %d on %s\n", keepPrefix, os.Getpid(), host))
	_, err := writeFileRaw(keep, 0o444, msg, false)
	if errors.Is(err, fs.ErrNotExist) {
		if err := shared.mkdirAll(dir, filepath.Dir(filepath.Dir(dir))); err != nil {
			return err
		}
		_, err = writeFileRaw(keep, 0o444, msg, false)
	}
	if err == nil {
		shared.apply(keep)
	}
	if errors.Is(err, fs.ErrExist) {
		if b, rerr := readFileRaw(keep); rerr == nil && strings.HasPrefix(string(b), keepPrefix+" ") {
			return nil
		}
	}
	return err
}

// writeRename writes data to a new read-only file named prefix plus a
// random suffix, fsynced if sync, then renames it to target. The file is
// written in tmpDir, git codex's own directory, where no git command looks:
// `git prune` deletes every "tmp_*" file of the object directories older
// than its expiry, which by default is any age, so a temporary file there
// could vanish before its rename. Where tmpDir is on another filesystem
// (the rename fails), or is "", the file is written in dir, as git writes
// its own, and written again if prune took it. A missing directory is
// created (a new repository may have no objects/pack yet).
func writeRename(tmpDir, dir, prefix, target string, data []byte, sync bool, shared sharedPerm) error {
	if tmpDir != "" {
		err := writeRenameIn(tmpDir, prefix, target, data, sync, shared)
		if !errors.Is(err, syscall.EXDEV) {
			return err
		}
	}
	var err error
	for try := 0; try < 5; try++ {
		err = writeRenameIn(dir, prefix, target, data, sync, shared)
		if !errors.Is(err, errTmpGone) {
			return err
		}
	}
	return err
}

// errTmpGone is a temporary file that vanished before its rename.
var errTmpGone = errors.New("temporary file deleted before its rename")

func writeRenameIn(dir, prefix, target string, data []byte, sync bool, shared sharedPerm) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, prefix+hex.EncodeToString(rnd[:]))
	_, err := writeFileRaw(tmp, 0o444, data, sync)
	if errors.Is(err, fs.ErrNotExist) {
		// objects/pack or codex/tmp: below the common dir
		if err := shared.mkdirAll(dir, filepath.Dir(filepath.Dir(dir))); err != nil {
			return err
		}
		_, err = writeFileRaw(tmp, 0o444, data, sync)
	}
	if err == nil {
		shared.apply(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err = os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(filepath.Dir(target)); serr == nil {
				return fmt.Errorf("%w: %v", errTmpGone, err)
			}
		}
		return err
	}
	return nil
}
