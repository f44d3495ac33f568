package github

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/gitcodex/git-codex/tools"
)

// Conditional requests (GitHub's REST docs, "Best practices for using the
// REST API: use conditional requests"): most answers carry an ETag; a GET
// that sends it back in If-None-Match is answered 304 Not Modified, with
// no body, when nothing changed, and an authorized 304 does not count
// against the primary rate limit. The watcher asks for the same review
// listings every interval and they rarely change, so every GET's answer
// is remembered with its ETag and a 304 is handed on as that answer: the
// callers parse what they always parsed.
//
// GitHub's ETag depends on the token (an ETag got with one token is not
// honoured with another) and on the Accept header, so both are part of
// the key, the token only as a hash.

// Bounds of a Cache: what a long-running watcher holds at most.
const (
	cacheEntries = 512
	cacheBytes   = 8 << 20
	// cacheEntryBytes is the largest answer kept: a page of 100 reviews
	// with long bodies fits; a bigger one is simply fetched again.
	cacheEntryBytes = 2 << 20
)

// Cache remembers GitHub's answers to GETs, with their ETags, in memory
// (least recently used dropped first, bounded in entries and bytes). One
// Cache serves every client its Open opens: the watcher opens a client
// for each pass, and the ETags must outlive it. Safe for concurrent use.
type Cache struct {
	maxEntries, maxBytes, maxEntry int

	mu      sync.Mutex
	entries map[string]*list.Element // of *cachedAnswer
	order   *list.List               // most recently used first
	bytes   int
}

// cachedAnswer is a 200 answer to a GET and the ETag it came with.
type cachedAnswer struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

// NewCache is an empty cache with the default bounds.
func NewCache() *Cache {
	return newCache(cacheEntries, cacheBytes, cacheEntryBytes)
}

func newCache(entries, bytes, entry int) *Cache {
	return &Cache{maxEntries: entries, maxBytes: bytes, maxEntry: entry, entries: map[string]*list.Element{}, order: list.New()}
}

// Open is the package's Open, with clients that share this cache: use
// its method value as the registry's tools.GitHubOpener.
func (c *Cache) Open(ctx context.Context, s tools.GitHubSettings) (tools.GitHub, error) {
	return open(ctx, s, c)
}

// Len is how many answers the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *Cache) get(key string) (cachedAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return cachedAnswer{}, false
	}
	c.order.MoveToFront(el)
	return *el.Value.(*cachedAnswer), true
}

// put keeps an answer, dropping the least recently used past the bounds;
// an answer larger than one entry may be is not kept (and forgets the
// key's old one).
func (c *Cache) put(a cachedAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(a.key)
	if len(a.body) > c.maxEntry {
		return
	}
	c.entries[a.key] = c.order.PushFront(&a)
	c.bytes += len(a.body)
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.order.Back().Value.(*cachedAnswer).key)
	}
}

func (c *Cache) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(key)
}

func (c *Cache) removeLocked(key string) {
	if el, ok := c.entries[key]; ok {
		c.bytes -= len(el.Value.(*cachedAnswer).body)
		c.order.Remove(el)
		delete(c.entries, key)
	}
}

// conditional is the transport under go-gh's client (which sets the
// token and Accept before it): it sends a remembered ETag with a GET and
// turns the 304 into the remembered answer.
type conditional struct {
	next  http.RoundTripper
	cache *Cache
}

// cacheKey is what a GET's answer depends on: its URL, what it accepts,
// the API version, and (hashed) its credential.
func cacheKey(req *http.Request) string {
	auth := sha256.Sum256([]byte(req.Header.Get("Authorization")))
	return req.URL.String() + "\x00" + req.Header.Get("Accept") + "\x00" + req.Header.Get("X-GitHub-Api-Version") + "\x00" + hex.EncodeToString(auth[:])
}

func (t *conditional) RoundTrip(req *http.Request) (*http.Response, error) {
	// only plain GETs: a caller's own validators or ranges are its own
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" || req.Header.Get("If-Modified-Since") != "" || req.Header.Get("Range") != "" {
		return t.next.RoundTrip(req)
	}
	key := cacheKey(req)
	known, ok := t.cache.get(key)
	if ok {
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		req.Header.Set("If-None-Match", known.etag)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case ok && resp.StatusCode == http.StatusNotModified:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		// the stored answer, its header fields updated from the 304's
		// (RFC 9111, 4.3.4): the rate limit's count, a new ETag
		h := known.header.Clone()
		for k, v := range resp.Header {
			if k != "Content-Length" && k != "Content-Type" && k != "Content-Encoding" && k != "Transfer-Encoding" {
				h[k] = v
			}
		}
		if e := h.Get("ETag"); e != "" && e != known.etag {
			known.etag = e
		}
		known.header = h
		t.cache.put(known)
		return known.response(req, resp), nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		return t.keep(key, resp)
	case resp.StatusCode == http.StatusOK && ok:
		t.cache.remove(key) // an answer without an ETag: nothing to validate
	}
	// an error is handed on as it is; the remembered answer stays, for
	// when GitHub answers again
	return resp, nil
}

// keep reads a 200 answer's body to remember it, and hands on the answer
// with the body as read. A body too large to keep is passed on whole,
// not kept.
func (t *conditional) keep(key string, resp *http.Response) (*http.Response, error) {
	head, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.cache.maxEntry)+1))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if len(head) > t.cache.maxEntry {
		t.cache.remove(key)
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		return resp, nil
	}
	resp.Body.Close()
	t.cache.put(cachedAnswer{key: key, etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: head})
	resp.Body = io.NopCloser(bytes.NewReader(head))
	return resp, nil
}

// response is the remembered answer as a 200 to req (notModified is the
// 304 that confirmed it).
func (a cachedAnswer) response(req *http.Request, notModified *http.Response) *http.Response {
	h := a.header.Clone()
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK,
		Proto: notModified.Proto, ProtoMajor: notModified.ProtoMajor, ProtoMinor: notModified.ProtoMinor,
		Header: h, Body: io.NopCloser(bytes.NewReader(a.body)), ContentLength: int64(len(a.body)),
		Request: req, TLS: notModified.TLS,
	}
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
