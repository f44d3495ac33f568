package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gitcodex/git-codex/gitstate"
	"github.com/gitcodex/git-codex/gitstate/gitstatetest"
	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/tools/builtin"
)

const human = "human:ui@example.com"

// fixture is a started server over a fresh repository.
type fixture struct {
	st  *gitstate.Store
	reg *tools.Registry
	srv *Server
	url string // without the token
}

func newFixture(t *testing.T, initialised bool, opts Options) *fixture {
	t.Helper()
	return newFixtureAt(t, gitstatetest.NewRepo(t), initialised, opts)
}

// newFixtureAt is newFixture in the repository at dir.
func newFixtureAt(t *testing.T, dir string, initialised bool, opts Options) *fixture {
	t.Helper()
	st, err := gitstate.Open(dir, gitstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if initialised {
		if _, err := builtin.Registry().Init(context.Background(), st, tools.Origin{ID: human}); err != nil {
			t.Fatal(err)
		}
	}
	reg := builtin.Registry()
	opts.Store, opts.Registry, opts.Caller = st, reg, human
	opts.PollEvery = 10 * time.Millisecond
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	u, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	u, _, _ = strings.Cut(u, "?")
	return &fixture{st: st, reg: reg, srv: srv, url: strings.TrimSuffix(u, "/")}
}

func (f *fixture) call(t *testing.T, caller, tool, args string) tools.Result {
	t.Helper()
	r := f.reg.CallAs(context.Background(), f.st, tools.Origin{ID: caller}, tool, json.RawMessage(args))
	if !r.OK {
		t.Fatalf("%s %s: %+v", tool, args, r.Error)
	}
	return r
}

func get(t *testing.T, url string, out any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, b)
		}
	}
	return res.StatusCode
}

// TestStateAndEvents reads the page of a repository that records reads
// and refusals on the state (codex.reads=state), where its log shows them
// among the changes; reads_test.go has the default, reads on the reads ref.
func TestStateAndEvents(t *testing.T) {
	dir := gitstatetest.NewRepo(t)
	gitstatetest.ReadsOnState(t, dir)
	f := newFixtureAt(t, dir, true, Options{})
	f.call(t, human, "agent_register", `{"id":"alice","type":"worker"}`)
	f.call(t, human, "mail_send", `{"to":"alice","subject":"hi","body":"there"}`)
	f.call(t, human, "task_create", `{"title":"t1","description":"d"}`)
	f.call(t, human, "lock_acquire", `{"name":"db"}`)
	r := f.reg.CallAs(context.Background(), f.st, tools.Origin{ID: "alice"}, "mail_send", json.RawMessage(`{"to":"nobody","subject":"x","body":"y"}`))
	if r.OK {
		t.Fatal("mail to nobody was accepted")
	}
	f.call(t, human, "agent_list", `{}`)

	var s stateJSON
	if code := get(t, f.url+"/api/state", &s); code != 200 {
		t.Fatalf("state: %d", code)
	}
	if !s.Initialized || !s.Tip || len(s.Agents) != 1 || s.Agents[0].ID != "alice" || s.Mail["alice"] != (mailCount{1, 1}) || len(s.Tasks) != 1 || len(s.Locks) != 1 {
		t.Fatalf("state: %+v", s)
	}
	names := map[string]int{}
	for _, k := range s.Kinds {
		names[k.Name] = k.Count
	}
	for _, k := range builtin.Registry().Kinds() {
		if _, ok := names[k.Name]; !ok {
			t.Errorf("kind %s missing from /api/state", k.Name)
		}
	}

	var page eventPage
	get(t, f.url+"/api/events?limit=3", &page)
	if len(page.Events) != 3 || page.Next == "" || page.Events[0].Tool != "agent_list" || page.Events[0].Kind != "read" ||
		page.Events[1].Kind != "refusal" || page.Events[1].Result != "RESOURCE_NOT_FOUND" && page.Events[1].Result != page.Events[1].Error || page.Events[1].Actor != "alice" {
		t.Fatalf("first page: %+v", page)
	}
	var older eventPage
	get(t, f.url+"/api/events?limit=50&before="+page.Next, &older)
	if len(older.Events) != 4 || older.Next != "" || older.Events[3].Tool != "init" {
		t.Fatalf("second page: %+v", older)
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"errors=1", []string{"mail_send"}},
		{"changes=1", []string{"lock_acquire", "task_create", "mail_send", "agent_register", "init"}},
		{"tool=task_create", []string{"task_create"}},
		{"actor=alice", []string{"mail_send"}},
	} {
		var p eventPage
		get(t, f.url+"/api/events?"+tc.q, &p)
		var got []string
		for _, e := range p.Events {
			got = append(got, e.Tool)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.q, got, tc.want)
		}
	}

	// a past state: before the mail, no mail; the commit shows its changes
	var first eventPage
	get(t, f.url+"/api/events?changes=1&tool=agent_register", &first)
	var past stateJSON
	get(t, f.url+"/api/state?at="+first.Events[0].Commit[:12], &past)
	if past.Tip || past.Commit != first.Events[0].Commit || len(past.Mail) != 0 || len(past.Agents) != 1 || past.Agents[0].Live != "" {
		t.Fatalf("past state: %+v", past)
	}
	get(t, f.url+"/api/state?at="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), &past)
	if past.Commit != s.Commit {
		t.Fatalf("at a time after the tip: %s, want %s", past.Commit, s.Commit)
	}
	var cd commitDetail
	get(t, f.url+"/api/commit/"+first.Events[0].Commit, &cd)
	if cd.Tool != "agent_register" || len(cd.Changes) != 1 || cd.Changes[0].Path != "agents/alice.json" || cd.Changes[0].Action != "add" {
		t.Fatalf("commit: %+v", cd)
	}
	var recs recordPage
	get(t, f.url+"/api/records/mail?under=alice", &recs)
	if recs.Count != 1 || len(recs.Records) != 1 {
		t.Fatalf("records: %+v", recs)
	}
	f.call(t, human, "config_set", `{"key":"policy.human.deny","value":"[\"review.*\"]"}`)
	var ts []toolJSON
	get(t, f.url+"/api/tools", &ts)
	permitted := map[string]bool{}
	for _, tl := range ts {
		permitted[tl.Name] = true
	}
	if !permitted["mail_send"] || !permitted["instance_send"] || permitted["send_feedback"] {
		t.Errorf("tools a person may call: %v", permitted)
	}
	// an action the policy refuses is refused from the page too, and audited
	req, _ := http.NewRequest("POST", f.url+"/api/call/request_review", strings.NewReader(`{}`))
	req.Header.Set("X-Codex-UI", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var refused struct {
		OK    bool     `json:"ok"`
		Error apiError `json:"error"`
	}
	json.NewDecoder(res.Body).Decode(&refused)
	res.Body.Close()
	tip, _ := f.st.Event(context.Background(), "")
	if refused.OK || refused.Error.Code != "PERMISSION_DENIED" || tip.Get(gitstate.TrailerError) != "PERMISSION_DENIED" || tip.Get(gitstate.TrailerActor) != human {
		t.Errorf("refused action: %+v; tip %s by %s", refused, tip.Get(gitstate.TrailerError), tip.Get(gitstate.TrailerActor))
	}
	// the page and its assets, embedded, with a policy that allows no other origin
	for path, want := range map[string]string{"/": "text/html", "/assets/app.js": "javascript", "/assets/style.css": "text/css"} {
		res, err := http.Get(f.url + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), want) {
			t.Errorf("%s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if path == "/" && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("/: CSP %q", res.Header.Get("Content-Security-Policy"))
		}
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, true, Options{})
	for _, tc := range []struct {
		path string
		code int
		err  string
	}{
		{"/nowhere", 404, "NOT_FOUND"},
		{"/api/nope", 404, "NOT_FOUND"},
		{"/api/state?at=garbage%20--output", 400, "INVALID_INPUT"},
		{"/api/state?at=-Q", 400, "INVALID_INPUT"},
		{"/api/state?at=deadbeefdeadbeef", 404, "RESOURCE_NOT_FOUND"},
		{"/api/state?at=1990-01-01", 404, "RESOURCE_NOT_FOUND"},
		{"/api/events?limit=0", 400, "INVALID_INPUT"},
		{"/api/events?limit=x", 400, "INVALID_INPUT"},
		{"/api/events?before=HEAD", 400, "INVALID_INPUT"},
		{"/api/commit/abc", 400, "INVALID_INPUT"},
		{"/api/commit/" + strings.Repeat("0", 40), 404, "RESOURCE_NOT_FOUND"},
		{"/api/records/nokind", 404, "RESOURCE_NOT_FOUND"},
		{"/api/records/mail?under=../x", 400, "INVALID_INPUT"},
		{"/api/records/mail?limit=100000", 400, "INVALID_INPUT"},
	} {
		var e map[string]apiError
		if code := get(t, f.url+tc.path, &e); code != tc.code || e["error"].Code != tc.err {
			t.Errorf("%s: %d %+v, want %d %s", tc.path, code, e, tc.code, tc.err)
		}
	}
	// an action without the page's header, with bad JSON, to an unknown tool
	for _, tc := range []struct {
		tool, body string
		header     bool
		code       int
	}{
		{"mail_send", `{}`, false, 403},
		{"mail_send", `{`, true, 400},
		{"no_such_tool", `{}`, true, 404},
	} {
		req, _ := http.NewRequest("POST", f.url+"/api/call/"+tc.tool, strings.NewReader(tc.body))
		if tc.header {
			req.Header.Set("X-Codex-UI", "1")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("POST %s %s: %d, want %d", tc.tool, tc.body, res.StatusCode, tc.code)
		}
	}
	// a Host that is not the loopback (DNS rebinding) is refused without a token
	req, _ := http.NewRequest("GET", f.url+"/api/state", nil)
	req.Host = "evil.example:80"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Errorf("foreign Host: %d, want 403", res.StatusCode)
	}
}

func TestNoState(t *testing.T) {
	f := newFixture(t, false, Options{})
	var s stateJSON
	if code := get(t, f.url+"/api/state", &s); code != 200 || s.Initialized || !strings.Contains(s.Hint, "git codex init") {
		t.Fatalf("no state: %d %+v", code, s)
	}
	var p eventPage
	if code := get(t, f.url+"/api/events", &p); code != 200 || len(p.Events) != 0 {
		t.Fatalf("no events: %d %+v", code, p)
	}
	// the page appears once someone initialises
	events := openStream(t, f.url+"/api/stream")
	if _, err := builtin.Registry().Init(context.Background(), f.st, tools.Origin{ID: human}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events); ev.Tool != "init" {
		t.Fatalf("first event: %+v", ev)
	}
}

func TestTokenRequired(t *testing.T) {
	f := newFixture(t, true, Options{Token: "s3cret"})
	for _, tc := range []struct {
		path, auth string
		code       int
	}{
		{"/", "", 401},
		{"/api/state", "", 401},
		{"/api/events", "", 401},
		{"/api/stream", "", 401},
		{"/assets/app.js", "", 401},
		{"/nowhere", "", 401},
		{"/api/state?token=wrong", "", 401},
		{"/api/state", "Bearer wrong", 401},
		{"/api/state?token=s3cret", "", 200},
		{"/api/state", "Bearer s3cret", 200},
		{"/?token=s3cret", "", 200},
	} {
		req, _ := http.NewRequest("GET", f.url+tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("%s (%s): %d, want %d", tc.path, tc.auth, res.StatusCode, tc.code)
		}
		if tc.code == 401 && (strings.Contains(string(b), "<html") || strings.Contains(string(b), "commit")) {
			t.Errorf("%s: a 401 served content: %s", tc.path, b)
		}
	}
	// not loopback: a token is made even when none is given
	srv, err := New(Options{Store: f.st, Registry: f.reg, Addr: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Token()) != 32 {
		t.Fatalf("no token for a network address: %q", srv.Token())
	}
}

// openStream opens /api/stream and returns its "commit" events; the
// "hello" event is read first.
func openStream(t *testing.T, url string) <-chan eventJSON {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan eventJSON, 100)
	hello := make(chan struct{})
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && name == "hello":
				close(hello)
			case strings.HasPrefix(line, "data: ") && name == "commit":
				var ev eventJSON
				json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev)
				out <- ev
			}
		}
	}()
	t.Cleanup(func() { cancel(); res.Body.Close() })
	select {
	case <-hello:
	case <-time.After(5 * time.Second):
		t.Fatal("no hello event")
	}
	return out
}

func next(t *testing.T, ch <-chan eventJSON) eventJSON {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return eventJSON{}
}

func TestStreamOneEventPerCommit(t *testing.T) {
	f := newFixture(t, true, Options{})
	events := openStream(t, f.url+"/api/stream")
	for i := 0; i < 5; i++ {
		r := f.call(t, human, "mail_send", fmt.Sprintf(`{"to_human":true,"subject":"n%d","body":"b"}`, i))
		// from the commit's landing, not the call's start (a write that
		// stalls on a busy machine is not the stream's delay); a stream
		// that polls every few seconds instead of promptly fails this
		start := time.Now()
		ev := next(t, events)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("event %d arrived %s after the call returned", i, d)
		}
		if ev.Commit != r.Commit || ev.Tool != "mail_send" || ev.Kind != "change" {
			t.Fatalf("event %d: %+v, want commit %s", i, ev, r.Commit)
		}
	}
	// a burst of commits arrives one event each, oldest first
	var want []string
	for i := 0; i < 20; i++ {
		want = append(want, f.call(t, human, "mail_send", fmt.Sprintf(`{"to_human":true,"subject":"burst%d","body":"b"}`, i)).Commit)
	}
	for i, w := range want {
		if ev := next(t, events); ev.Commit != w {
			t.Fatalf("burst event %d: %s, want %s", i, ev.Commit, w)
		}
	}
	// an action from the page is the same tool call, audited the same way
	req, _ := http.NewRequest("POST", f.url+"/api/call/mail_send", strings.NewReader(`{"to_human":true,"subject":"from the page","body":"b"}`))
	req.Header.Set("X-Codex-UI", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK   bool `json:"ok"`
		Data struct {
			MailID string `json:"mail_id"`
		} `json:"data"`
	}
	json.NewDecoder(res.Body).Decode(&r)
	res.Body.Close()
	ev := next(t, events)
	if !r.OK || ev.Tool != "mail_send" || ev.Actor != human || ev.Target != r.Data.MailID {
		t.Fatalf("page action: %+v, event %+v", r, ev)
	}
	e, err := f.st.Event(context.Background(), ev.Commit)
	if err != nil || e.Get(gitstate.TrailerTool) != "mail_send" || e.Get(gitstate.TrailerActor) != human || e.Get(gitstate.TrailerResult) != "ok" {
		t.Fatalf("audit record of the page's action: %+v %v", e, err)
	}
}

// TestClientsLeave opens hundreds of streams and pages, drops them mid
// stream, and checks that no goroutine is left behind.
func TestClientsLeave(t *testing.T) {
	f := newFixture(t, true, Options{})
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for round := 0; round < 2; round++ {
		var cancels []context.CancelFunc
		for i := 0; i < 200; i++ {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", f.url+"/api/stream", nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 {
				t.Fatalf("stream %d: %d", i, res.StatusCode)
			}
			cancels = append(cancels, func() { cancel(); res.Body.Close() })
		}
		f.call(t, human, "agent_list", `{}`)
		for i := 0; i < 50; i++ {
			var s stateJSON
			get(t, f.url+"/api/state", &s)
		}
		for _, c := range cancels {
			c()
		}
	}
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before+2 && f.srv.hub.streams() == 0 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before; %d streams open\n%s", n, before, f.srv.hub.streams(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRefMovesDuringRead reads the state while writers move the ref: every
// answer is one whole commit's state.
func TestRefMovesDuringRead(t *testing.T) {
	f := newFixture(t, true, Options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 40; i++ {
			f.reg.CallAs(context.Background(), f.st, tools.Origin{ID: human}, "mail_send", json.RawMessage(fmt.Sprintf(`{"to_human":true,"subject":"m%d","body":"b"}`, i)))
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		var s stateJSON
		if code := get(t, f.url+"/api/state", &s); code != 200 {
			t.Fatalf("state while moving: %d", code)
		}
		var mailKind kindJSON
		for _, k := range s.Kinds {
			if k.Name == "mail" {
				mailKind = k
			}
		}
		// the clock counts commits: init, then one per mail
		if mailKind.Count != int(s.Clock)-1 || s.Mail["human"].Total != mailKind.Count {
			t.Fatalf("torn state at clock %d: %d mail records, %+v", s.Clock, mailKind.Count, s.Mail)
		}
	}
}
