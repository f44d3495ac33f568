// Package ui is git codex's web page: a local HTTP server that reads
// refs/codex/state and its history through the store's read APIs and pushes
// every new commit to open pages as a server-sent event. It keeps no
// database and no copy of the state: each request reads one snapshot (one
// commit), so a ref that moves while a page renders cannot tear it. Actions
// from the page are tool calls through the same registry as the CLI's, with
// the same audit record.
package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/tools"
)

// DefaultAddr is where the server listens unless told otherwise: loopback,
// on a port the kernel picks.
const DefaultAddr = "127.0.0.1:0"

// Options configure a Server.
type Options struct {
	// Store is the opened repository's state; the server reads it and
	// calls tools on it, and does not close it.
	Store *gitstate.Store
	// Registry runs the page's actions (the CLI's registry).
	Registry *tools.Registry
	// Caller is who the page's actions are made as: the person at the
	// CLI, human:<git user.email>. Empty: the page cannot act.
	Caller string
	// Addr is the listen address; "" means DefaultAddr.
	Addr string
	// Token, when set, is required on every request. When empty and Addr
	// is not a loopback address, Start makes a random one: the page is
	// never open to the network without one.
	Token string
	// PollEvery is how often the ref watch looks at the ref's files; zero
	// means 50 ms.
	PollEvery time.Duration
	// MaxStreams bounds the open event streams; zero means 1000.
	MaxStreams int
}

// Server serves the page and its API. Build it with New, then Start it (or
// mount Handler in a test server); Close stops it.
type Server struct {
	opts  Options
	token string
	hub   *hub
	// atTimes are the ?at= times resolved at the tip (commitAt)
	atTimes atTimes

	mu     sync.Mutex
	srv    *http.Server
	ln     net.Listener
	url    string
	stop   context.CancelFunc
	done   sync.WaitGroup
	closed bool
}

// New checks the options and builds a server that does not listen yet.
func New(opts Options) (*Server, error) {
	if opts.Store == nil || opts.Registry == nil {
		return nil, errors.New("ui: a store and a registry are required")
	}
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = 50 * time.Millisecond
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 1000
	}
	s := &Server{opts: opts, token: opts.Token}
	if s.token == "" && !loopbackAddr(opts.Addr) {
		t, err := randomToken()
		if err != nil {
			return nil, err
		}
		s.token = t
	}
	s.hub = newHub(opts.Store, opts.PollEvery, opts.MaxStreams)
	return s, nil
}

// Token is the token the server requires, "" when it requires none.
func (s *Server) Token() string { return s.token }

// Handler is the server's routes behind its token check. Start serves it;
// tests may mount it in an httptest.Server (the ref watch runs only after
// Start or Watch).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveIndex)
	mux.Handle("GET /assets/", assetHandler())
	mux.HandleFunc("GET /api/state", s.serveState)
	mux.HandleFunc("GET /api/events", s.serveEvents)
	mux.HandleFunc("GET /api/commit/{rev}", s.serveCommit)
	mux.HandleFunc("GET /api/records/{kind}", s.serveRecords)
	mux.HandleFunc("GET /api/stream", s.serveStream)
	mux.HandleFunc("GET /api/tools", s.serveTools)
	mux.HandleFunc("POST /api/call/{tool}", s.serveCall)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no page at %s; the page is at /", r.URL.Path))
	})
	return s.guard(mux)
}

// Watch starts the ref watch that feeds the event streams, until ctx ends
// or the server closes. Start calls it; a test that mounts Handler itself
// calls it too.
func (s *Server) Watch(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil || s.closed {
		return
	}
	ctx, s.stop = context.WithCancel(ctx)
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		s.hub.watch(ctx)
	}()
}

// Start listens on the configured address, serves in the background and
// returns the page's URL (with the token, if one is required).
func (s *Server) Start(ctx context.Context) (string, error) {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return "", fmt.Errorf("ui: listen on %s: %w", s.opts.Addr, err)
	}
	s.Watch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		ln.Close()
		return "", errors.New("ui: server closed")
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	s.url = "http://" + urlHost(ln.Addr().String()) + "/"
	if s.token != "" {
		s.url += "?token=" + s.token
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s.url, nil
}

// URL is the page's address once started.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close ends the event streams, stops the ref watch and the listener, and
// waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.stop != nil {
		s.stop()
	}
	srv := s.srv
	s.mu.Unlock()
	s.hub.close()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err = srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
	}
	s.done.Wait()
	return err
}

// loopbackAddr reports whether a listen address is on the loopback
// interface only ("127.0.0.1:0", "[::1]:8080", "localhost:0").
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// urlHost is a listener's address as a URL host.
func urlHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return net.JoinHostPort(host, port)
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("ui: make a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
