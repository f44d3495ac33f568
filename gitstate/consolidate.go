package gitstate

import (
	"context"
	"errors"
	"fmt"

	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Every transaction writes its objects as one small pack (see writePack).
// Once there are smallPackLimit packs of up to foldMaxObjects objects, the
// next writer folds some of them into one, choosing them as `git repack
// --geometric=2` does: the smallest packs, up to where the packs' sizes
// form a progression of factor 2. So a lookup has few indexes to search
// (at most ~16 + log2(foldMaxObjects)), each object is copied O(log n)
// times over its life, and git's own `gc --auto`, which repacks
// everything once there are gc.autoPackLimit (50) packs, does not run for
// that reason. Folding is done in-process, not by running `git repack`,
// which cost 30–300 ms a time here (a process, pack-objects, a second
// process) against ~1 ms for the copy. Bigger packs (a clone's, gc's) and
// packs with a .keep or .promisor file are left to git.
const (
	smallPackLimit = 16
	foldMaxObjects = 10000
)

// consolidate folds small packs when there are enough of them. It runs
// after the writer lock is released, so writers never wait for it, and
// takes git gc's own lock ("gc.pid"), so it never runs beside a gc or
// another fold: a repack that deletes packs another one is reading makes
// that one fail. Errors lose nothing: the new pack is complete before any
// old pack is deleted, and a fold cut short leaves packs git ignores or
// reads.
func (s *Store) consolidate(ctx context.Context) {
	s.objMu.Lock()
	n := len(s.objects.foldable())
	s.objMu.Unlock()
	if n < smallPackLimit {
		return
	}
	unlock, err := lockForGC(s.commonDir)
	if err != nil {
		return // gc or another fold is running
	}
	defer unlock()
	s.objMu.Lock()
	defer s.objMu.Unlock()
	s.objects.scanned = false // another process may have folded meanwhile
	if err := s.objects.scan(); err != nil {
		return
	}
	_ = s.objects.fold(geometricSplit(s.objects.foldable()))
}

// foldable lists the local packs folding may take, smallest first.
func (o *objectStore) foldable() []*packFile {
	var out []*packFile
	for _, p := range o.packs {
		if !p.keep && p.count < foldMaxObjects {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].count < out[j].count })
	return out
}

// geometricSplit returns the packs (sorted by size) to roll into one so
// that the rest, with the new pack, grow by a factor of at least 2: git's
// split_pack_geometry on object counts.
func geometricSplit(packs []*packFile) []*packFile {
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if packs[i].count < 2*packs[i-1].count {
			split = i + 1
			break
		}
	}
	total := 0
	for _, p := range packs[:split] {
		total += p.count
	}
	for split < len(packs) && packs[split].count < 2*total {
		total += packs[split].count
		split++
	}
	if split < 2 {
		return nil
	}
	return packs[:split]
}

// fold copies every object of packs into one new pack, then deletes them:
// the index first, which makes a pack invisible to git and to scan, then
// the pack. Whole objects are copied as they are stored, compressed;
// deltas are resolved and stored whole.
func (o *objectStore) fold(packs []*packFile) error {
	if len(packs) < 2 {
		return nil
	}
	var b objectBatch
	for _, p := range packs {
		if err := o.copyPack(&b, p); err != nil {
			return err
		}
	}
	if err := o.write(&b); err != nil {
		return err
	}
	gone := map[*packFile]bool{}
	for _, p := range packs {
		gone[p] = true
		base := filepath.Join(p.dir, "pack", p.name)
		os.Remove(base + ".idx")
		os.Remove(base + ".pack")
		o.dropCached(p)
		p.close()
	}
	kept := o.packs[:0]
	for _, p := range o.packs {
		if !gone[p] {
			kept = append(kept, p)
		}
	}
	o.packs = kept
	if gone[o.last] {
		o.last = nil
	}
	return nil
}

// lockForGC takes the lock `git gc` takes, with git's protocol: create
// "gc.pid.lock" exclusively, refuse if "gc.pid" names a live process on
// this host written less than 12 hours ago, else write "<pid> <host>" and
// rename it to "gc.pid". unlock removes "gc.pid". A gc.pid left by a killed
// process names a dead pid, which git (and this) ignore.
func lockForGC(commonDir string) (unlock func(), err error) {
	pidPath := filepath.Join(commonDir, "gc.pid")
	lock := pidPath + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	if b, err := os.ReadFile(pidPath); err == nil {
		fi, serr := os.Stat(pidPath)
		fields := strings.Fields(string(b))
		if serr == nil && time.Since(fi.ModTime()) <= 12*time.Hour && len(fields) == 2 {
			pid, perr := strconv.Atoi(fields[0])
			if perr == nil && (fields[1] != host || processAlive(pid)) {
				f.Close()
				os.Remove(lock)
				return nil, fmt.Errorf("gitstate: gc is running as pid %d on %s", pid, fields[1])
			}
		}
	}
	_, err = fmt.Fprintf(f, "%d %s", os.Getpid(), host)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lock, pidPath)
	}
	if err != nil {
		os.Remove(lock)
		return nil, err
	}
	return func() { os.Remove(pidPath) }, nil
}

// processAlive is git's test: kill(pid, 0) succeeds or fails with EPERM.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// copyPack adds every object of p to b: its entries in pack order, each
// spanning up to the next entry's offset.
func (o *objectStore) copyPack(b *objectBatch, p *packFile) error {
	if err := p.openIndex(); err != nil {
		return err
	}
	if err := o.openPack(p); err != nil {
		return err
	}
	size, _, err := p.f.stat()
	if err != nil {
		return err
	}
	data := make([]byte, size)
	if _, err := p.f.ReadAt(data, 0); err != nil {
		return fmt.Errorf("gitstate: read %s.pack: %w", p.name, err)
	}
	type ent struct {
		i   int
		off int64
	}
	ents := make([]ent, p.count)
	for i := range ents {
		ents[i] = ent{i, p.offset(i)}
	}
	sort.Slice(ents, func(a, b int) bool { return ents[a].off < ents[b].off })
	end := int64(len(data)) - 20
	for k, e := range ents {
		next := end
		if k+1 < len(ents) {
			next = ents[k+1].off
		}
		if e.off < 12 || next > end || e.off >= next {
			return fmt.Errorf("gitstate: %s.pack: entry at %d out of bounds", p.name, e.off)
		}
		var h plumbing.Hash
		copy(h[:], p.idx[idxFanout+20*e.i:])
		if typ := plumbing.ObjectType((data[e.off] >> 4) & 7); !typ.IsDelta() {
			b.addEntry(h, data[e.off:next])
			continue
		}
		v, err := o.readAt(p, e.off, 0)
		if err != nil {
			return err
		}
		b.add(v.typ, v.data)
	}
	return nil
}
