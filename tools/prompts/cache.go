package prompts

import (
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Cache keeps each agent's catalog between calls, so a long-running
// server builds the search index once per load, not once per query. A
// catalog is reloaded on Reload, when registry.json changed (one stat per
// Get), and when Refresh finds anything in the agent's folder changed.
// Safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	catalogs map[cacheKey]*Catalog
	watchers map[int]func(root string, cat *Catalog)
	nextID   int
}

type cacheKey struct{ root, agent string }

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{catalogs: map[cacheKey]*Catalog{}, watchers: map[int]func(string, *Catalog){}}
}

// Get returns agent's catalog for the working tree root, loading it on
// first use or when registry.json changed since it was read.
func (c *Cache) Get(root, agent string) *Catalog {
	c.mu.Lock()
	cat, ok := c.catalogs[cacheKey{root, agent}]
	c.mu.Unlock()
	if ok && (root == "" || stampOf(filepath.Join(root, filepath.FromSlash(RegistryPath(agent)))) == cat.stamp) {
		return cat
	}
	return c.Reload(root, agent)
}

// Reload reads agent's catalog again and tells the watchers.
func (c *Cache) Reload(root, agent string) *Catalog {
	cat := Load(root, agent)
	c.mu.Lock()
	c.catalogs[cacheKey{root, agent}] = cat
	fns := make([]func(string, *Catalog), 0, len(c.watchers))
	for _, fn := range c.watchers {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(root, cat)
	}
	return cat
}

// Loaded returns agent's catalog if one is loaded, without loading.
func (c *Cache) Loaded(root, agent string) (*Catalog, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cat, ok := c.catalogs[cacheKey{root, agent}]
	return cat, ok
}

// Refresh reloads agent's catalog if anything in its folder (registry.json,
// a template, a directory) changed since it was loaded, and reports
// whether it did. It walks the folder: call it from a ticker, not per
// request.
func (c *Cache) Refresh(root, agent string) bool {
	c.mu.Lock()
	cat, ok := c.catalogs[cacheKey{root, agent}]
	c.mu.Unlock()
	if ok && fingerprint(root, agent) == cat.print {
		return false
	}
	c.Reload(root, agent)
	return true
}

// Watch calls fn after every load, with the working tree and the catalog
// loaded, until the returned function is called. fn runs on the loading
// goroutine (possibly inside a tool call) and must not block or load.
func (c *Cache) Watch(fn func(root string, cat *Catalog)) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextID
	c.nextID++
	c.watchers[id] = fn
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.watchers, id)
	}
}

// fileStamp identifies one version of a file cheaply.
type fileStamp struct {
	exists bool
	size   int64
	mtime  time.Time
}

func stampOf(name string) fileStamp {
	fi, err := os.Stat(name)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime()}
}

// fingerprint hashes the names, sizes and times of everything in the
// agent's folder (registry.json and the prompts tree, following no
// symlinks), so a change anywhere in it shows.
func fingerprint(root, agent string) uint64 {
	h := fnv.New64a()
	if root == "" {
		return h.Sum64()
	}
	dir := filepath.Join(root, ".agent", agent)
	add := func(p string, fi fs.FileInfo) {
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel))
		h.Write([]byte{0})
		b, _ := fi.ModTime().MarshalBinary()
		h.Write(b)
		var sz [8]byte
		for i, n := 0, uint64(fi.Size()); i < 8; i, n = i+1, n>>8 {
			sz[i] = byte(n)
		}
		h.Write(sz[:])
	}
	if fi, err := os.Stat(filepath.Join(dir, "registry.json")); err == nil {
		add(filepath.Join(dir, "registry.json"), fi)
	}
	// Climpt's configurations (every agent's) and the folders they name
	// for this agent's domains are looked at too: a change there changes
	// where templates are found
	for _, f := range configFiles(root) {
		if fi, err := os.Stat(f); err == nil {
			add(f, fi)
		}
	}
	filepath.WalkDir(filepath.Join(dir, "prompts"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := os.Stat(p); err == nil { // a symlink's target's stamp
			add(p, fi)
		}
		return nil
	})
	return h.Sum64()
}

// configFiles are the files of Climpt's configuration folder.
func configFiles(root string) []string {
	des, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(ConfigDir)))
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			out = append(out, filepath.Join(root, filepath.FromSlash(ConfigDir), de.Name()))
		}
	}
	return out
}
