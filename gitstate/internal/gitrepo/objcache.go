package gitrepo

// The cache of objects read from packs, by their place in the pack: a
// delta's base is found by offset, and the objects of one delta chain share
// their bases, so a walk that reads many versions of a tree inflates each
// base once. It holds at most cacheBytes, emptied when full, and what no
// operation used lately is dropped (Age): a long-lived process (an agent's
// MCP server, the watcher) reads a new version of the tip's trees after
// every change and never the old ones again, and without aging the cache
// grew with every change until it was full, 32 MiB later, which showed as
// its resident memory growing with the calls it served (issue 27,
// docs/PERFORMANCE.md).

// cacheBytes bounds the bytes of pack objects kept for reuse; past it the
// cache starts again empty.
const cacheBytes = 32 << 20

// cacheAgeOps is how many operations (snapshots taken, see Age) an object
// stays cached without being read: enough for what a run of tool calls
// reads again (the tip's root and the trees above the records they touch),
// few enough that the versions a process stopped reading go soon.
const cacheAgeOps = 64

// cachedObject is an object in the cache and the operation that last read
// it.
type cachedObject struct {
	v    packed
	used uint64
}

// cachedAt returns the object at k if it is cached.
func (o *Objects) cachedAt(k packKey) (packed, bool) {
	e, ok := o.cache[k]
	if !ok {
		return packed{}, false
	}
	e.used = o.ops
	return e.v, true
}

func (o *Objects) remember(k packKey, v packed) {
	if o.cache == nil || o.cached+len(v.data) > cacheBytes {
		o.cache, o.cached = map[packKey]*cachedObject{}, 0
	}
	if old, ok := o.cache[k]; ok {
		o.cached -= len(old.v.data)
	}
	o.cache[k] = &cachedObject{v: v, used: o.ops}
	o.cached += len(v.data)
}

// Age marks the start of an operation (the store calls it for every
// snapshot it takes). Every cacheAgeOps operations it drops the objects no
// operation read in the last cacheAgeOps: a single operation, however many
// objects it reads, keeps them all (up to cacheBytes).
func (o *Objects) Age() {
	o.ops++
	if o.ops%cacheAgeOps != 0 {
		return
	}
	for k, e := range o.cache {
		if o.ops-e.used > cacheAgeOps {
			delete(o.cache, k)
			o.cached -= len(e.v.data)
		}
	}
}

// dropCached forgets p's objects and bytes (p is being closed).
func (o *Objects) dropCached(p *packFile) {
	o.win.drop(p)
	for k, e := range o.cache {
		if k.p == p {
			delete(o.cache, k)
			o.cached -= len(e.v.data)
		}
	}
}

// cachedBytes is the bytes of objects cached (for tests).
func (o *Objects) cachedBytes() int { return o.cached }
