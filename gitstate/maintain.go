package gitstate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Every transaction writes its objects as one small pack. The store never
// deletes a pack or an object itself (a second, different `git gc` beside
// git's own would be one more program deleting what git keeps): once the
// repository's object directory holds repackAt packs, a writer starts
// `git repack --geometric=2 -d` in the background, after it has released
// the writer lock. Git then rolls the smallest packs into one so that the
// rest grow by a factor of two: a lookup has O(log n) indexes to search,
// each object is copied O(log n) times over its life, and git's gc --auto,
// which repacks everything once there are gc.autoPackLimit (50) packs,
// has no reason to run for the packs we write. A geometric repack packs
// every object of the packs it rolls up, reachable or not, and leaves
// packs with a .keep alone, so it is safe beside writers whatever their
// timing; and git removes the multi-pack-index, bitmaps and reverse
// indexes of what it deletes.
//
// Which packs a round rolls up is chosen so that git's walk through the
// history happens once every historyBatch writes, not at nearly every
// repack (historypacks.go).
//
// The user's own switches for automatic housekeeping are obeyed (gc.auto=0
// or maintenance.auto=false turn this off, as they turn off git's), and
// so is extensions.preciousObjects (git refuses to delete packs there).
const repackAt = 32

// maintain runs after a transaction, outside the writer lock: it starts a
// background geometric repack when packs have piled up, and every
// PackEvery commits `git maintenance run --auto`, which is what git's
// porcelain runs after its own commits (git's thresholds decide whether
// anything is done: loose objects others left, refs to pack, reflogs, and
// commits not yet in the commit-graph).
func (s *Store) maintain(ctx context.Context, c Clock, counted bool) {
	if s.opts.PackEvery < 0 {
		return
	}
	cfg := s.config()
	if !cfg.autoMaintenance {
		return
	}
	s.objMu.Lock()
	n := s.objects.LocalPacks()
	s.objMu.Unlock()
	// the list may still hold packs a repack deleted meanwhile: read
	// again, unless git's repack is running now, when this write would
	// only find it so and start nothing. On a big state that is most
	// writes: the repack walks the tip's whole tree (1.5-2 s for 64k
	// records), while the packs written meanwhile stay over repackAt,
	// and the rescan was ~0.27 ms of each write (issue 27).
	if n >= repackAt && !s.backgroundRunning("repack") {
		s.phase("maintain-rescan")
		s.objMu.Lock()
		if s.objects.Rescan() == nil {
			n = s.objects.LocalPacks()
		}
		s.objMu.Unlock()
	}
	// a multi-pack-index naming a deleted pack, which a person's repack
	// wrote beside ours (midx.go): git's rule, remove it and write it
	// afresh; first thing in the repack, which would fail reading
	// through it
	stale := !cfg.precious && s.midxStale()
	if n >= repackAt && !cfg.precious {
		args := []string{"repack", "--geometric=2", "-d", "-l", "-q"}
		if _, err := os.Stat(filepath.Join(s.commonDir, "objects", "pack", midxFile)); err == nil {
			// keep the repository's multi-pack-index in step (git
			// removes one that lists a pack it deletes)
			args = append(args, "--write-midx")
		}
		if stale {
			args = append([]string{"--drop-midx"}, args...)
		}
		// the packs that would walk the history wait for
		// historyBatch of them (historypacks.go)
		s.startBackground("repack", backgroundScript, append([]string{"gc", strconv.Itoa(repackAt), strconv.Itoa(historyBatch)}, args...)...)
	} else if stale {
		s.startBackground("midx", backgroundScript, "gc", "0", "0", "--drop-midx", "multi-pack-index", "write", "--no-progress")
	}
	if counted && uint64(c)%uint64(s.opts.PackEvery) == 0 {
		tasks := []string{"-"} // the user's (maintenanceScript)
		if !cfg.ownMaintenance {
			// git's default task, and the commit-graph: git's gc
			// writes one, but the store's repacks keep gc --auto
			// from ever running, and without one every walk of the
			// history (git's repack, log, sync's rev-list) reads
			// each commit from its pack: 1.2-2.3 s instead of
			// 0.16-0.3 s for the 228k commits of the simulated
			// team's clone at 23 days. Its own threshold decides
			// (maintenance.commit-graph.auto: 100 commits not in
			// the graph), and core.commitGraph=false turns it off.
			tasks = []string{"gc", "commit-graph"}
		}
		s.startBackground("maintenance", maintenanceScript, tasks...)
	}
}

// gitLockShell is the shell functions of git's two maintenance locks, for
// the scripts below ($d the common dir, $host this host's name). git gc's
// lock is taken with git's protocol (lock_repo_for_gc in builtin/gc.c):
// create "gc.pid.lock" exclusively, give up if "gc.pid" names a live
// process on this host (or any process on another host) and was written
// less than 12 hours ago, else write "<pid> <host>" into the lock and
// rename it to "gc.pid"; git maintenance's is "objects/maintenance.lock",
// created exclusively as git does. unlock removes gc.pid only if it still
// names this shell, so the lock names a live process for exactly as long
// as the job runs. waitfor tries a lock every 0.1 s for up to 30 s and
// fails after that: giving up at once left the packs of a burst's last
// writes unrolled when maintenance happened to run then
// (TestGitRepacksSmallPacks, 35 packs of 32 in CI).
//
// repacking reports a repack of git's writing into the pack directory
// beside us, which no lock tells (a `git repack` run by hand takes
// neither): its temporary packs (".tmp-<pid>-pack-<sum>.*", named after
// the repack's process, here while it lives) or pack-objects' files being
// written ("tmp_pack_*", "tmp_idx_*", "tmp_rev_*": changed within the last
// minute). git reads a temporary pack as any other (prepare_pack in
// packfile.c takes every ".idx"), so a geometric repack started then
// leaves out of the pack it writes every object the temporary pack holds,
// and deletes the packs it rolled up: when that repack then fails (a
// `git repack --cruft -d` finding a pack it listed deleted by ours), git
// removes its temporary files on exit and those objects are gone
// (TestWritersBesideGitMaintenance/repack-cruft lost commits and trees so,
// in CI and 1 run in 3 under load). A pack such a repack finishes between
// the store's listing of the packs and git's does the same in a round that
// rolls up reads only: git rolls it up too, leaving out what the packs the
// round keeps (--keep-pack) hold, which the other repack then deletes
// (repack-midx-bitmap, 1 run in 5 under load). So the store's repack waits
// for such a repack before it lists the packs, and lists them again if one
// began writing meanwhile.
const gitLockShell = `m="$d/objects/maintenance.lock"
repacking() {
	for f in "$d"/objects/pack/.tmp-*-pack*; do
		[ -e "$f" ] || continue
		rp=${f##*/.tmp-} && rp=${rp%%-*}
		case $rp in "" | *[!0-9]*) continue ;; esac
		if kill -0 "$rp" 2>/dev/null || [ -d "/proc/$rp" ]; then return 0; fi
	done
	[ -n "$(find "$d/objects/pack" -maxdepth 1 \( -name 'tmp_pack_*' -o -name 'tmp_idx_*' -o -name 'tmp_rev_*' \) -mmin -1 2>/dev/null)" ]
}
packsquiet() { ! repacking; }
gcrunning() {
	[ -f "$d/gc.pid" ] && [ -n "$(find "$d/gc.pid" -mmin -720 2>/dev/null)" ] || return 1
	read -r pid h 2>/dev/null <"$d/gc.pid"
	[ -n "$pid" ] && { [ "$h" != "$host" ] || kill -0 "$pid" 2>/dev/null; }
}
unlock() { if [ "$(cat "$d/gc.pid" 2>/dev/null)" = "$$ $host" ]; then rm -f "$d/gc.pid"; fi; }
takepid() {
	(set -C; printf '%s %s' "$$" "$host" >"$d/gc.pid.lock") 2>/dev/null || return 1
	if gcrunning; then rm -f "$d/gc.pid.lock"; return 1; fi
	mv -f "$d/gc.pid.lock" "$d/gc.pid" || { rm -f "$d/gc.pid.lock"; exit 0; }
}
take() {
	takepid || return 1
	if ! (set -C; : >"$m") 2>/dev/null; then unlock; return 1; fi
}
waitfor() {
	i=0
	until "$@"; do
		i=$((i + 1)); [ "$i" -lt 300 ] || return 1
		sleep 0.1
	done
}
`

// backgroundScript runs `git --git-dir $1 <args...>` for startBackground:
// $1 the common dir, $2 this host's name, $3 "gc" or "-", $4 a pack count
// (0: none), $5 historyBatch for a repack (0: none; see below), then
// git's arguments, which --drop-midx may precede: the
// multi-pack-index, its bitmap and reverse index are removed first, under
// the locks, as git's repack clears them (midx.go). With "gc" it first
// takes git gc's lock and git maintenance's (gitLockShell), waiting while
// either is taken (a git gc, the store's commit-graph, or a `git
// maintenance run` beside it) and giving up after 30 s; git's work done, it
// releases both. All of it happens here, in a process of its own session,
// never in the writer: a writer killed at any moment leaves no lock behind
// (a killed writer holding gc.pid.lock would stop every later git gc).
//
// With historyBatch, each round first reads the store's lists of the packs
// it wrote (historypacks.go): fewer than that many listed packs of changes
// there, the round passes git a --keep-pack for every pack not listed as
// holding reads only, and then lists the pack it made among the reads';
// otherwise, or when the packs left out would be three quarters of the
// pack count, it rolls up everything and empties both lists. It writes
// only into lists that exist, which the writers create with the modes of
// core.sharedRepository.
//
// With a pack count, git runs again while the object directory still
// holds that many packs once it is done: writers that found this job
// running started none of their own, so the packs they wrote while git was
// busy would otherwise wait for the next write to be rolled up, and after
// the last write of a burst they never would be (TestGitRepacksSmallPacks
// once ended with 52 packs so under load). It runs again only if the round
// before removed a pack that was there when it started (a repack that can
// roll nothing up, the packs being kept, would otherwise loop), so under
// sustained writes it repacks just when a writer would have started a
// repack of its own. A pack that lands between the last count and the
// job's exit is still left to the next write: the count is the job's last
// step, so that window is a few instructions wide, not a repack's length.
const backgroundScript = `d=$1 host=$2 lock=$3 again=$4 hist=$5; shift 5
` + gitLockShell + `if [ "$lock" = gc ]; then
	waitfor take || exit 0
	trap 'rm -f "$m"; unlock' EXIT
	trap 'exit 1' HUP INT TERM
fi
p=$d/objects/pack
if [ "$1" = --drop-midx ]; then
	shift
	rm -f "$p/multi-pack-index" "$p"/multi-pack-index-*.bitmap "$p"/multi-pack-index-*.rev
fi
# listed FILE: the packs FILE names that are still there ($found, $nfound);
# $stale is set if it names others
listed() {
	found= nfound=0 stale=
	for h in $(cat "$1" 2>/dev/null); do
		case ${h#pack-} in "$h" | "" | *[!0-9a-f]*) stale=1; continue ;; esac
		if [ -f "$p/$h.pack" ]; then found="$found $h" nfound=$((nfound + 1)); else stale=1; fi
	done
}
hl=$d/codex/historypacks rl=$d/codex/readpacks
tries=0
while :; do
	waitfor packsquiet || exit 0
	before=$(cd "$p" 2>/dev/null && echo pack-*.idx)
	keep= reads_only=
	if [ "$hist" -gt 0 ]; then
		listed "$hl"
		k=$nfound
		[ -z "$stale" ] || printf '%s\n' $found >"$hl"
		listed "$rl"
		reads=$found
		[ -z "$stale" ] || printf '%s\n' $found >"$rl"
		nk=0
		for f in "$p"/pack-*.pack; do
			[ -f "$f" ] || continue
			h=${f##*/} && h=${h%.pack}
			case "$reads " in *" $h "*) continue ;; esac
			keep="$keep --keep-pack=$h.pack" nk=$((nk + 1))
		done
		if [ "$k" -ge "$hist" ] || [ $((nk * 4)) -ge $((again * 3)) ]; then
			keep=
			[ ! -f "$hl" ] || : >"$hl"
			[ ! -f "$rl" ] || : >"$rl"
		else
			reads_only=1
		fi
	fi
	# a repack that began writing while the packs were listed may
	# leave a pack these lists miss, which git would roll up while
	# leaving out what the packs kept here hold: list them again once
	# it is done
	if repacking; then
		tries=$((tries + 1))
		[ "$tries" -lt 20 ] || exit 0
		continue
	fi
	git --git-dir "$d" "$@" $keep || exit
	if [ -n "$reads_only" ]; then
		# what the round made holds reads: a pack that was not there,
		# has no .keep (a writer's, not listed yet) and is not a change's
		listed "$hl"
		for f in "$p"/pack-*.idx; do
			h=${f##*/} && h=${h%.idx}
			case " $before $found " in *" $h.idx "* | *" $h "*) continue ;; esac
			[ -f "$p/$h.keep" ] || [ ! -f "$rl" ] || printf '%s\n' "$h" >>"$rl"
		done
	fi
	[ "$again" -gt 0 ] || exit 0
	n=0 gone=
	for f in "$p"/pack-*.idx; do
		[ -f "${f%.idx}.pack" ] && n=$((n + 1))
	done
	for f in $before; do
		[ -f "$p/$f" ] || gone=1
	done
	[ "$n" -ge "$again" ] && [ -n "$gone" ] || exit 0
done`

// maintenanceScript runs `git maintenance run --auto --quiet` for
// startBackground, once for each argument after $1 the common dir and $2
// this host's name: a task of git maintenance's, or "-" for the tasks the
// user chose. git maintenance gives up without a word when its lock is
// taken, and the store's repack holds it for its whole run, which on a
// busy state is much of the time: the commit-graph due at a round was
// lost whenever that round met a repack, and under load three rounds in
// a row did (TestMaintenanceKeepsACommitGraph failed in CI, and 1 run in
// 20 to 40 with the CPUs busy). So each run first waits, as a repack does,
// until neither lock is taken (giving up on that task after 30 s), and
// the commit-graph task runs holding git gc's lock: no repack of the
// store's, nor a git gc, starts between the wait and git's taking its own
// lock, nor while the graph is written. The other tasks cannot hold it:
// the gc task runs `git gc --auto`, which does nothing while gc.pid names
// a live process; should one lose the race to a repack starting at that
// instant, git's thresholds still stand at the next round, as for git's
// own gc --auto.
const maintenanceScript = `d=$1 host=$2; shift 2
` + gitLockShell + `idle() { ! gcrunning && [ ! -e "$m" ]; }
pidonly() { takepid || return 1; [ ! -e "$m" ] || { unlock; return 1; }; }
trap unlock EXIT
trap 'exit 1' HUP INT TERM
for task; do
	if [ "$task" = commit-graph ]; then waitfor pidonly || continue; else waitfor idle || continue; fi
	t=--task=$task
	[ "$task" != - ] || t=
	git --git-dir "$d" maintenance run --auto --quiet $t
	unlock
done`

// startBackground starts script (backgroundScript or maintenanceScript)
// detached from this process, with the common dir, this host's name and
// args as its arguments, unless one started under the same name is still
// running: the child inherits a descriptor holding a flock on "<common
// dir>/codex/<name>.lock", which the kernel releases when the last process
// holding it (git and the children it starts) exits, however it ends. The
// writer waits only for the start.
//
// The repack and the multi-pack-index run under git gc's own lock and git
// maintenance's (backgroundScript), so that they never run beside a `git
// gc` or a `git maintenance run`, nor start while one runs: two repacks at
// once fail (one deletes a pack the other is reading), a detached gc
// --auto that fails stops git's automatic gc for a day (gc.log), and a
// multi-pack-index written while a repack deletes packs lists packs that
// are gone.
func (s *Store) startBackground(name, script string, args ...string) {
	lock := filepath.Join(s.commonDir, "codex", name+".lock")
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	s.config().shared.applyFd(int(f.Fd()))
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return // one is running
	}
	cmd := exec.Command("sh", append([]string{"-c", script, "sh", s.commonDir, hostname()}, args...)...)
	cmd.ExtraFiles = []*os.File{f}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = maintenanceEnv(os.Environ())
	if err := cmd.Start(); err != nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return
	}
	// reap it when it ends, so that it never lingers as a zombie of a
	// long-lived process (an MCP server); a CLI process that exits first
	// leaves it to init.
	go cmd.Wait()
}

// hostname is this host's name as the scripts write it into gc.pid.
func hostname() string {
	host, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return host
}

// backgroundRunning reports whether the job startBackground starts under
// name is running: something holds its lock. The probe takes the lock
// shared for an instant; a writer whose startBackground meets it then
// starts no job, as when one runs, and this writer, finding none, goes on
// to start it.
func (s *Store) backgroundRunning(name string) bool {
	f, err := os.Open(filepath.Join(s.commonDir, "codex", name+".lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// config returns git's settings for the repository, read once.
func (s *Store) config() repoConfig {
	s.cfgOnce.Do(func() { s.cfg = s.loadConfig() })
	return s.cfg
}

// maintenanceEnv is the environment of git's background maintenance: the
// writer's, without the identity and credential of the agent whose call
// started it (CODEX_*). The repack is git's work for the repository, not
// the agent's: it must not carry the agent's token for its whole run, nor
// be taken for one of the agent's processes (ending an agent ends the
// processes whose environment names it; a repack cut short only leaves
// its temporary files for git to clean).
func maintenanceEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CODEX_") {
			out = append(out, kv)
		}
	}
	return out
}
