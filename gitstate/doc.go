// Package gitstate is git codex's store: the whole coordination state kept in
// git, as a materialised tree of JSON records at the tip of one ref.
//
// Every write is a transaction that becomes exactly one commit on
// [RefState]. The commit's tree is the complete new state, its parent is the
// previous tip, and its message (a summary line plus trailers) is the audit
// record of the call that produced it. Readers open a [Snapshot] of the tip
// (or of any past commit) and look records up by path; nothing is replayed.
//
// The ref is moved the way git itself moves refs: a kernel flock serialises
// git codex writers for the whole read-modify-write, and the swap itself uses
// git's "<ref>.lock" + fsync + rename protocol, so the git CLI (fetch,
// pack-refs, gc) can run at the same time and a killed writer leaves either the
// old state or the new one. go-git's own reference writer is not used for
// refs/codex/*: it rewrites ref files in place (see shared/notes).
//
// Git's objects, refs and config files are read and written by
// internal/gitrepo, the store's own object database; the code repository's
// porcelain (worktrees, branches, notes, pushes) is package repo. Only
// gitstate and gitrepo import go-git. Domain code (package tools) sees
// transactions, paths and JSON, never hashes or storers.
package gitstate
