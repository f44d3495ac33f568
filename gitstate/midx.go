package gitstate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// A multi-pack-index that names a deleted pack. Neither a person's `git
// repack -d --write-midx` nor the store's background geometric repack
// takes a lock the other respects (the store's runs under git gc's lock,
// which plain `git repack` ignores). git's repack writes its
// multi-pack-index from the packs it found when it started; when the
// store's repack deletes one of them after that write opened it, the index
// it renames into place names a pack that is gone. Objects the index
// places in that pack cannot be read by git any more (git looks past the
// index only in packs the index does not list), although the store's own
// repack put them in its new pack: `git fsck` reports them unreadable, and
// a sync's fetch or push fails (TestUserRepackBesideStoreRepack, on git
// 2.39: 11 of 78 rounds). Nothing is lost, and git's own rule
// repairs it: a pack the index names is deleted only after the index is
// removed (repack.c, remove_redundant_pack: clear_midx_file), and an index
// is written afresh from the packs that are there. `git multi-pack-index
// write` alone would not do (git 2.39 carries the packs of the existing
// index over without opening them). So after every transaction the store
// checks the index when it changed (a stat, then its pack names), and a
// stale one is removed, with its bitmap and reverse index, and written
// again, by a background job under git gc's lock as the repack is.

// repairMidx removes a stale multi-pack-index and writes it afresh, now,
// under git gc's lock (backgroundScript; nothing is done while a gc or the
// store's repack runs, which writes one afresh itself). A sync does this
// before git reads the objects it sends: a push whose pack-objects met a
// pack the index names and that is gone would fail.
func (s *Store) repairMidx(ctx context.Context) {
	if s.config().precious || !s.midxStale() {
		return
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", backgroundScript, "sh", s.commonDir, hostname(), "gc", "0", "0", "--drop-midx", "multi-pack-index", "write", "--no-progress")
	cmd.Env = maintenanceEnv(os.Environ())
	_ = cmd.Run() // git's own error: the next write or sync tries again
}

// midxFile is the multi-pack-index of a pack directory.
const midxFile = "multi-pack-index"

// midxStale reports whether the repository's multi-pack-index names a
// pack that is not there. An index it found whole is not read again until
// it changes (its inode, size or time).
func (s *Store) midxStale() bool {
	packDir := filepath.Join(s.commonDir, "objects", "pack")
	fi, err := os.Stat(filepath.Join(packDir, midxFile))
	if err != nil {
		return false
	}
	sig := fmt.Sprintf("%d %d", fi.ModTime().UnixNano(), fi.Size())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sig += fmt.Sprintf(" %d", st.Ino)
	}
	s.midxMu.Lock()
	seen := s.midxWhole == sig
	s.midxMu.Unlock()
	if seen {
		return false
	}
	b, err := os.ReadFile(filepath.Join(packDir, midxFile))
	if err != nil {
		return false
	}
	names, err := midxPackNames(b)
	if err != nil {
		return false // not one this version reads: git's to judge
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(packDir, trimSuffix(n, ".idx")+".pack")); err != nil {
			return true
		}
	}
	s.midxMu.Lock()
	s.midxWhole = sig
	s.midxMu.Unlock()
	return false
}

func trimSuffix(s, suffix string) string {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)]
	}
	return s
}

// midxPackNames reads the pack names of a multi-pack-index file (git's
// gitformat-pack, "multi-pack-index files"): a 12-byte header ("MIDX",
// version, hash version, chunk count, base count, pack count), a table of
// chunk ids and offsets ending with a zero id, and the PNAM chunk of
// NUL-terminated names, padded with NULs.
func midxPackNames(b []byte) ([]string, error) {
	if len(b) < 12 || string(b[:4]) != "MIDX" {
		return nil, fmt.Errorf("not a multi-pack-index")
	}
	chunks, packs := int(b[6]), int(binary.BigEndian.Uint32(b[8:12]))
	table := b[12:]
	if len(table) < (chunks+1)*12 {
		return nil, fmt.Errorf("short chunk table")
	}
	for i := 0; i < chunks; i++ {
		e := table[i*12:]
		if string(e[:4]) != "PNAM" {
			continue
		}
		from, to := binary.BigEndian.Uint64(e[4:12]), binary.BigEndian.Uint64(e[16:24])
		if from > to || to > uint64(len(b)) {
			return nil, fmt.Errorf("PNAM chunk out of bounds")
		}
		var names []string
		for _, n := range bytes.Split(b[from:to], []byte{0}) {
			if len(n) > 0 {
				names = append(names, string(n))
			}
		}
		if len(names) != packs {
			return nil, fmt.Errorf("PNAM holds %d names, the header counts %d packs", len(names), packs)
		}
		return names, nil
	}
	return nil, fmt.Errorf("no PNAM chunk")
}
