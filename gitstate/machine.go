package gitstate

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The machine id names this machine's reads refs and marks the instances
// spawned here, whose tmux sessions and worktrees only this machine can
// judge. It belongs to the repository where it was made, not to its files:
// a repository copied with `cp -r` (or moved) is another machine to git
// codex, as its tmux sessions and worktrees are not the original's. So the
// id is kept in a file named after where the repository's git dir is
// (<git dir>/codex/machine.at.<hash of its path>): a copy finds no file of
// its own, sees the original's, and makes an id of its own instead of
// passing for the original.
//
// <git dir>/codex/machine mirrors the id for people, scripts and older
// versions of git codex, which read it alone. A repository from before
// the id was tied to its place (machine, no machine.at.*) keeps its id:
// there is no telling whether it was copied.
const (
	machineFile   = "machine"
	machineAtFile = "machine.at."
)

// machineAt is the name of the file that holds the machine id of the
// repository whose common git dir is commonDir, where it is now.
func machineAt(commonDir string) string {
	where, err := filepath.EvalSymlinks(commonDir)
	if err != nil {
		where = commonDir
	}
	if abs, err := filepath.Abs(where); err == nil {
		where = abs
	}
	sum := sha256.Sum256([]byte(filepath.Clean(where)))
	return machineAtFile + hex.EncodeToString(sum[:8])
}

// Machine is this repository's machine id, "" with fs.ErrNotExist when
// none was made here yet (the first read committed or instance spawned
// makes it: MachineID).
func (s *Store) Machine() (string, error) {
	dir := filepath.Join(s.commonDir, "codex")
	id, err := readID(filepath.Join(dir, machineAt(s.commonDir)))
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	// a repository from before ids were tied to their place: its id is
	// this one's unless the place files say it was made elsewhere
	if others, _ := filepath.Glob(filepath.Join(dir, machineAtFile+"*")); len(others) > 0 {
		return "", fs.ErrNotExist
	}
	return readID(filepath.Join(dir, machineFile))
}

func readID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("gitstate: %s is empty: %w", path, fs.ErrNotExist)
	}
	return id, nil
}

// MachineID is this repository's machine id, made if it has none yet:
// the id of a repository from before ids were tied to their place, else a
// random one. It takes no lock: the id is written to a file of its own and
// linked into place, the first link wins and every caller reads the one
// id, so a spawn (which records it on its instance) and a read racing to
// make it agree.
func (s *Store) MachineID() (string, error) {
	dir := filepath.Join(s.commonDir, "codex")
	at := filepath.Join(dir, machineAt(s.commonDir))
	id, err := readID(at)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("gitstate: read machine id: %w", err)
	}
	// a repository from before ids were tied to their place keeps its id
	// (Machine reads it only while no place file says otherwise)
	if id, err = s.Machine(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("gitstate: read machine id: %w", err)
	}
	if id == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		id = hex.EncodeToString(b[:])
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("gitstate: write machine id: %w", err)
	}
	tmp, err := writeTemp(dir, id+"\n")
	if err != nil {
		return "", fmt.Errorf("gitstate: write machine id: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, at); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("gitstate: write machine id: %w", err)
	}
	if id, err = readID(at); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// an empty file (written by hand): replace it
		if err := os.Rename(tmp, at); err != nil {
			return "", fmt.Errorf("gitstate: write machine id: %w", err)
		}
		if id, err = readID(at); err != nil {
			return "", err
		}
	}
	// the mirror, for people and older versions: the winner's id
	if cur, err := readID(filepath.Join(dir, machineFile)); err != nil || cur != id {
		if mirror, err := writeTemp(dir, id+"\n"); err == nil {
			if err := os.Rename(mirror, filepath.Join(dir, machineFile)); err != nil {
				os.Remove(mirror)
			}
		}
	}
	return id, nil
}

// writeTemp writes data to a new file in dir and returns its name.
func writeTemp(dir, data string) (string, error) {
	f, err := os.CreateTemp(dir, machineFile+".*.tmp")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
