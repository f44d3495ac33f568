package gitstate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gitcodex/git-codex/gitstate/internal/gitcli"

	"github.com/gitcodex/git-codex/gitstate/internal/gitrepo"
)

// RefState is the ref whose tip commit holds the whole current state.
const RefState = "refs/codex/state"

// DefaultPackEvery is how many commits pass between two runs of `git
// maintenance run --auto` (see maintain). Transactions write packs, which
// git's geometric repack rolls up; git's auto maintenance still packs
// refs, expires reflogs and packs what other programs left loose once
// git's own thresholds are reached.
const DefaultPackEvery = 512

// Options tune a Store. The zero value is what production uses.
type Options struct {
	// Now returns the wall-clock time stamped on commits and records.
	// Tests fix it; nil means time.Now.
	Now func() time.Time
	// PackEvery is the number of commits between `git maintenance run
	// --auto` runs; 0 means DefaultPackEvery and a negative value disables
	// every maintenance the store starts (tests and benchmarks that
	// measure writes alone).
	PackEvery int
	// LockTimeout bounds the wait for a "<ref>.lock" held by another
	// program (the git CLI). 0 means 10 seconds.
	LockTimeout time.Duration
	// Committer names the commits' committer; zero means "git codex".
	Committer Signature
}

// Signature is a name and e-mail for commit authors and committers.
type Signature struct {
	Name  string
	Email string
}

// Store is an opened repository's git codex state. It is safe for concurrent
// use by several goroutines, and several processes may each open their own
// Store on the same repository: writers queue on a kernel lock.
type Store struct {
	workDir   string // top of the working tree, "" for bare repos
	commonDir string // shared git dir: objects, refs, our lock
	opts      Options

	txMu    sync.Mutex // serialises this process's writers (flock is per file, not per goroutine)
	objMu   sync.Mutex // guards objects: go-git storage is not goroutine-safe
	objects *gitrepo.Repo
	writer  *writerLock
	// swept is set once this Store has removed the .keep files of dead
	// writers (see objectStore.sweepKeeps); guarded by the writer lock.
	swept   bool
	cfgOnce sync.Once
	cfg     repoConfig
	// wholeHistory makes a first sync fetch the state's history whole
	// (WholeHistory: `git codex sync --full`), whatever
	// codex.firstSyncDays says.
	wholeHistory atomic.Bool
	// firstDays, when set, stands for codex.firstSyncDays
	// (FirstSyncDays: `git codex sync --deepen <days>`).
	firstDays atomic.Pointer[float64]
	// midxWhole is the stat of the multi-pack-index last found to name
	// only packs that are there (midxStale)
	midxMu    sync.Mutex
	midxWhole string
	// reduced are the parts of directories Reduce made, by tree id
	reduced reduceMemo
	// swapHook, set only by tests, is called at stages of a ref swap:
	// "wait" when "<ref>.lock" is held by someone else, "locked" when this
	// writer holds it and is about to rename it over the ref.
	swapHook func(stage string)
	// phaseHook, set only by benchmarks, is called as a write passes the
	// stages of its critical section (see Store.phase), to measure where
	// its time goes.
	phaseHook func(phase string)
	// archiveCheckHook, set only by tests, is called each time a record
	// archive is walked to be checked (archivedIndex.check), not when its
	// refusal is remembered.
	archiveCheckHook func(ref string)
}

// phase reports that a write reached the named stage, to a benchmark's
// timing hook; without one it costs a nil check.
func (s *Store) phase(name string) {
	if s.phaseHook != nil {
		s.phaseHook(name)
	}
}

// Open finds the git repository that contains dir (dir itself, a parent, or a
// linked worktree) and opens its state. State lives in the common git dir, so
// every worktree of a repository sees the same state. Open succeeds on a
// repository without state; View and Update then report ErrNotInitialized.
// It fails with ErrUnsupportedRepository on a repository whose object or
// ref format git codex cannot write (SHA-256 object names, reftable).
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("gitstate: open %s: %w", dir, err)
	}
	work, _, common, err := discover(abs, os.Getenv)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(common); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PackEvery == 0 {
		opts.PackEvery = DefaultPackEvery
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = 10 * time.Second
	}
	if opts.Committer.Name == "" {
		opts.Committer = Signature{Name: "git codex", Email: "git-codex@localhost"}
	}
	s := &Store{
		workDir:   work,
		commonDir: common,
		opts:      opts,
		objects:   gitrepo.Open(common, filepath.Join(common, "codex", "tmp")),
		writer:    &writerLock{path: filepath.Join(common, "codex", "writer.lock"), packs: packLog{path: filepath.Join(common, "codex", "newpacks")}},
	}
	s.objects.SetPhase(s.phase)
	return s, nil
}

// lockWriter takes the writer lock: this process's, then the kernel's
// between processes.
func (s *Store) lockWriter() error {
	cfg := s.config() // read before the lock: it may start git
	s.txMu.Lock()
	s.writer.shared, s.writer.syncRef = cfg.shared, cfg.fsync.reference
	if err := s.writer.lock(); err != nil {
		s.txMu.Unlock()
		return err
	}
	news := s.writer.packs.news(cfg.shared)
	s.objMu.Lock()
	s.objects.Configure(gitrepo.Fsync(cfg.fsync.pack, cfg.fsync.packMetadata), gitrepo.SharedPerm(cfg.shared))
	for _, name := range news {
		s.objects.Told(name)
	}
	if !s.swept {
		s.objects.SweepKeeps()
		s.swept = true
	}
	s.objMu.Unlock()
	return nil
}

// unlockWriter releases the writer lock, after removing the .keep files of
// the packs written under it: by then the ref that names their objects has
// moved, or the transaction has failed and they are garbage for git to
// collect.
func (s *Store) unlockWriter() {
	s.objMu.Lock()
	s.writer.packs.publish(s.objects.KeptPacks())
	// listed while their .keep still protects them, so that a repack
	// never finds them unlisted (historypacks.go)
	s.notePacks(s.objects.WrittenPacks(), s.writer.shared)
	s.objects.ReleaseKeeps()
	s.objMu.Unlock()
	s.phase("released")
	s.writer.unlock()
	s.txMu.Unlock()
}

// Close releases the writer lock's file descriptor.
func (s *Store) Close() error {
	s.reduced.writes.Wait() // a past state's kept parts, written aside
	s.objMu.Lock()
	s.objects.Close()
	s.objMu.Unlock()
	return s.writer.close()
}

// WorkDir is the top of the working tree the store was opened from ("" for a
// bare repository).
func (s *Store) WorkDir() string { return s.workDir }

// GitDir is the git directory shared by all worktrees (git's common dir).
func (s *Store) GitDir() string { return s.commonDir }

// now returns the store's time in UTC at millisecond precision, the precision
// records and IDs carry.
func (s *Store) now() time.Time {
	return s.opts.Now().UTC().Truncate(time.Millisecond)
}

// Initialized reports whether the state ref exists.
func (s *Store) Initialized(ctx context.Context) (bool, error) {
	_, ok, err := gitrepo.ReadRef(s.commonDir, RefState)
	return ok, err
}

// findGitDir walks up from dir to the directory holding ".git" (a directory,
// or a file "gitdir: <path>" in linked worktrees and submodules: gitFile),
// or to a bare repository.
func findGitDir(dir string) (work, gitDir, gitFile string, err error) {
	dev := deviceOf(dir)
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				return d, dotgit, "", nil
			}
			target, err := readGitFile(dotgit)
			if err != nil {
				return "", "", "", err
			}
			return d, target, dotgit, nil
		}
		if isBareGitDir(d) {
			return "", d, "", nil
		}
		parent := filepath.Dir(d)
		// git stops at the top of the filesystem dir is on, unless
		// GIT_DISCOVERY_ACROSS_FILESYSTEM says otherwise (then git is
		// asked: see discover)
		if parent == d || deviceOf(parent) != dev {
			return "", "", "", fmt.Errorf("gitstate: %s: %w", dir, ErrNotRepository)
		}
		d = parent
	}
}

// deviceOf returns the device number of the filesystem holding p.
func deviceOf(p string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil {
		return 0
	}
	return uint64(st.Dev)
}

// readGitFile resolves a ".git" file of a linked worktree or submodule.
func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("gitstate: read %s: %w", path, err)
	}
	target, ok := gitcli.ParseGitFile(path, b)
	if !ok {
		return "", fmt.Errorf("gitstate: %s is not a gitdir file: %w", path, ErrNotRepository)
	}
	return target, nil
}

func isBareGitDir(d string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, name)); err != nil {
			return false
		}
	}
	return true
}

// commonDirOf follows "<gitdir>/commondir" (present in linked worktrees) to
// the directory that holds objects and refs.
func commonDirOf(gitDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if os.IsNotExist(err) {
		return gitDir, nil
	}
	if err != nil {
		return "", fmt.Errorf("gitstate: read commondir: %w", err)
	}
	common := string(bytes.TrimSpace(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return filepath.Clean(common), nil
}
