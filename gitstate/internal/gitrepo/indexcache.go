package gitrepo

// indexCache holds blocks of the big pack indexes (those over readIndexMax),
// which are read with pread, a block at a time, instead of being mapped.
//
// Why not map them: a mapped index's pages, once touched, count in the
// process's resident memory until the kernel needs them back, and over a
// long-lived process (an agent's MCP server) lookups reach every page of
// an index that grows with the repository: one server's resident memory
// grew with every object the repository gained (issue 27; the figures are
// in docs/PERFORMANCE.md). Read through this cache, what a process holds of
// its indexes is at most indexCacheBlocks blocks, whatever their size; the
// rest stays in the kernel's page cache, shared and reclaimable, where a
// miss finds it for one system call. A lookup reads a few blocks (a binary
// search within one fan-out bucket), and a process's lookups come back to
// the same objects (the tip's trees), so the blocks a call needs stay
// cached between calls. A batch of lookups scattered over an index (a
// sync's checks, a first reduce of a whole state) maps it for as long as
// the batch lasts (widen, packFile.mapIndex): the mapping is gone, and the
// resident memory with it, when the batch ends.
//
// It is one cache per Objects, shared by all of its packs, and like
// Objects it is not safe for concurrent use.
type indexCache struct {
	slots []indexBlock   // at most limit
	where map[uint64]int // slot of each cached block, by blockKey
	hand  int            // the clock's hand: the next slot considered for eviction
	limit int            // blocks held at most; 0: indexCacheBlocks (tests set fewer)
	last  int            // the slot read last
	packs uint64         // big indexes opened so far: the next one's number
	noMap bool           // tests: widened, read blocks as where mapping fails
}

// indexBlockSize is the block read at a time. A binary search reads 20
// bytes per step, and its last steps fall in one block: a small block
// holds more of what lookups need per byte cached than a page would, and
// a read costs about the same.
const indexBlockSize = 1024

// indexCacheBlocks bounds the blocks cached: 512 KiB, several times what
// one call's lookups read (four or five blocks each, for tens of objects).
const indexCacheBlocks = 512

// blockKey names block n of the index numbered id (packFile.ixid): a
// number, not a struct holding a pointer, as the map looks numbers up
// several times faster, and a lookup asks for a dozen blocks.
func blockKey(id uint64, n int64) uint64 { return id<<40 | uint64(n) }

// open numbers a big index that p opened, for its blocks' keys.
func (c *indexCache) open(p *packFile) {
	c.packs++
	p.ixid = c.packs
}

type indexBlock struct {
	key  uint64 // blockKey; 0 for a free slot (index numbers start at 1)
	data []byte
	used bool // read since the hand last passed (the clock's second chance)
}

// block returns block n of p's index, reading it on a miss (and evicting
// the first block the clock finds unused since its last pass).
func (c *indexCache) block(p *packFile, n int64) ([]byte, error) {
	k := blockKey(p.ixid, n)
	// a binary search's last steps stay in one block: checked before the map
	if c.last < len(c.slots) && c.slots[c.last].key == k {
		c.slots[c.last].used = true
		return c.slots[c.last].data, nil
	}
	if i, ok := c.where[k]; ok {
		c.last = i
		c.slots[i].used = true
		return c.slots[i].data, nil
	}
	if c.where == nil {
		c.where = map[uint64]int{}
	}
	limit := c.limit
	if limit <= 0 {
		limit = indexCacheBlocks
	}
	i := len(c.slots)
	if i < limit {
		c.slots = append(c.slots, indexBlock{data: make([]byte, indexBlockSize)})
	} else {
		for c.slots[c.hand].used {
			c.slots[c.hand].used = false
			c.hand = (c.hand + 1) % len(c.slots)
		}
		i, c.hand = c.hand, (c.hand+1)%len(c.slots)
		if c.slots[i].key != 0 {
			delete(c.where, c.slots[i].key)
		}
	}
	s := &c.slots[i]
	s.key, s.used, s.data = 0, false, s.data[:indexBlockSize]
	m, err := p.ixf.ReadAt(s.data, n*indexBlockSize)
	if m == 0 && err != nil {
		return nil, err
	}
	// a short read is the file's last block (the caller checked the
	// index's size against its object count when it opened it)
	s.key, s.used, s.data = k, true, s.data[:m]
	c.where[k], c.last = i, i
	return s.data, nil
}

// widen lets the cache hold up to blocks blocks until the returned func
// is called, which evicts what is over its usual bound again and lets the
// memory go. A bounded cache suits a long-lived process's calls, which
// come back to the same blocks; a batch that looks up tens of thousands
// of objects scattered over the indexes (a sync's checks of a day's
// history) finds few of its blocks in 512 and reads one per step of most
// binary searches: 86,000 preads in a day-behind sync of the simulated
// team's 48 h state, 14,000 with the indexes held (docs/PERFORMANCE.md,
// "The day-behind sync, broken down"). The big indexes are mapped
// meanwhile (packFile.mapIndex), so the blocks are read only where one
// cannot be. A limit set by a test stays.
func (c *indexCache) widen(blocks int) (restore func()) {
	before := c.limit
	if before > 0 || blocks <= indexCacheBlocks {
		return func() {}
	}
	c.limit = blocks
	return func() {
		c.limit = before
		if len(c.slots) <= indexCacheBlocks {
			return
		}
		for _, s := range c.slots[indexCacheBlocks:] {
			if s.key != 0 {
				delete(c.where, s.key)
			}
		}
		// a new backing array: the old one, with the blocks past the
		// bound, is garbage
		c.slots = append([]indexBlock(nil), c.slots[:indexCacheBlocks]...)
		c.hand, c.last = 0, 0
	}
}

// widened reports whether the cache is widened (widen) for a batch, and
// so whether big indexes are mapped meanwhile (packFile.mapIndex).
func (c *indexCache) widened() bool { return c.limit > indexCacheBlocks && !c.noMap }

// drop forgets p's blocks (p is being closed).
func (c *indexCache) drop(p *packFile) {
	for i := range c.slots {
		if c.slots[i].key != 0 && c.slots[i].key>>40 == p.ixid {
			delete(c.where, c.slots[i].key)
			c.slots[i].key, c.slots[i].used = 0, false
		}
	}
}

// cachedBlocks counts the blocks held (for tests).
func (c *indexCache) cachedBlocks() int { return len(c.where) }
