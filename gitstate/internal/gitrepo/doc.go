// Package gitrepo is git codex's own git object database: loose objects
// and packs read through their indexes (alternates, multi-pack
// indexes and partial clones through `git cat-file`), packs written one per
// transaction, git's tree and commit codecs, loose and packed refs, and a
// reader of git's config files. It exists so that a read or a write of the
// state starts no git process; gitstate is its only user.
//
// The store needs little of it: read an object, write a batch of new ones,
// ask whether one is there, read a ref (Storage is that interface; moving a
// ref is the store's, under its writer lock: gitstate's swapRef). Every
// function here agrees with what git itself writes and reads: the test
// suite in storage_test.go runs against objects and refs git made and
// checks that git accepts what this package wrote.
package gitrepo
