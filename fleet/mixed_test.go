package fleet

import (
	"slices"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// One fleet holds servers of every era and transport, and a dead, two
// refused and a hanging one: the catalogue holds every live server's
// tools, each failure is typed, the live servers were ready before the
// hanging one's timeout ran out, calls reach the right server, and Close
// leaves no process.
func TestMixedFleet(t *testing.T) {
	stateless := testservers.StartStateless(testservers.HTTPOptions{})
	defer stateless.Close()
	streamable := testservers.StartStreamable(testservers.HTTPOptions{})
	defer streamable.Close()
	sse := testservers.StartLegacy(testservers.LegacyOptions{})
	defer sse.Close()
	notFound := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404})
	defer notFound.Close()
	broken := testservers.StartStatus(testservers.StatusOptions{PostStatus: 500, PostBody: "database down"})
	defer broken.Close()
	hanging := testservers.StartStatus(testservers.StatusOptions{PostDelay: time.Hour})
	defer hanging.Close()
	stdioInit, initPids := stdioServer(t, testservers.Options{})
	stdioStateless, statelessPids := stdioServer(t, testservers.Options{Eras: testservers.StatelessOnly})

	const hangTimeout = 5 * time.Second
	rec := newRecorder()
	f, err := New([]Server{
		{Name: "stateless http", Target: client.URL(stateless.URL)},
		{Name: "streamable", Target: client.URL(streamable.URL)},
		{Name: "sse", Target: client.URL(sse.URL)},
		{Name: "stdio.initialize", Target: stdioInit},
		{Name: "stdio.stateless", Target: stdioStateless},
		{Name: "dead", Target: client.URL(deadURL(t))},
		{Name: "not-found", Target: client.URL(notFound.URL)},
		{Name: "broken", Target: client.URL(broken.URL)},
		{Name: "hanging", Target: client.URL(hanging.URL), ConnectTimeout: hangTimeout},
		{Name: "off", Target: client.URL(streamable.URL), Disabled: true},
	}, OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Status() {
		if want := map[bool]State{true: StateDisabled, false: StateNotConnected}[s.Server == "off"]; s.State != want {
			t.Errorf("%s is %s before any use, want %s (lazy)", s.Server, s.State, want)
		}
	}
	if n := len(pids(t, initPids)) + len(pids(t, statelessPids)); n != 0 {
		t.Errorf("New started %d processes", n)
	}

	start := time.Now()
	cat, err := f.Tools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	// A duration bound is inherent here: the listing must not wait for
	// the hanging server past its own timeout. It is generous (the
	// machine is shared); the ordering of events below is the exact check.
	if d := time.Since(start); d > hangTimeout+15*time.Second {
		t.Errorf("the listing took %v with a hanging server of timeout %v", d, hangTimeout)
	}
	wantKinds := map[string]string{
		"dead": KindUnreachable, "not-found": KindRefused, "broken": KindRefused,
		"hanging": KindTimeout, "off": KindDisabled,
	}
	for name, kind := range wantKinds {
		if e := cat.Errors[name]; e == nil || e.Kind != kind || e.Server != name {
			t.Errorf("%s: error %v, want kind %s", name, e, kind)
		}
	}
	if len(cat.Errors) != len(wantKinds) {
		t.Errorf("errors %v, want only %v", cat.Errors, wantKinds)
	}
	live := []string{"stateless http", "streamable", "sse", "stdio.initialize", "stdio.stateless"}
	hangFailed := rec.wait(ctxT(t), t, 0, is("hanging", StateFailed)) // told on the fleet's goroutine, maybe after Tools returned
	for _, name := range live {
		i := rec.index(is(name, StateReady))
		if i < 0 || i > hangFailed {
			t.Errorf("%s ready at event %d, the hanging server failed at %d: the live servers waited for it", name, i, hangFailed)
		}
		tool, ok := toolNamed(cat, name, "echo")
		if !ok {
			t.Errorf("%s: no echo tool in the catalogue", name)
			continue
		}
		res, err := f.CallTool(ctxT(t), tool.Name, map[string]any{"text": name})
		if err != nil || text(t, res) != name {
			t.Errorf("%s via %s: %v, %v", name, tool.Name, res, err)
		}
		if srv, orig, ok := f.Lookup(tool.Name); !ok || srv != name || orig != "echo" {
			t.Errorf("Lookup(%s) = %q %q %v", tool.Name, srv, orig, ok)
		}
	}
	seen := map[string]bool{}
	for _, tl := range cat.Tools {
		if !nameRE.MatchString(tl.Name) || seen[tl.Name] {
			t.Errorf("fleet name %q: invalid or repeated", tl.Name)
		}
		seen[tl.Name] = true
	}
	if !slices.IsSortedFunc(cat.Tools, func(a, b Tool) int { return cmpString(a.Name, b.Name) }) {
		t.Error("the catalogue is not sorted by name")
	}
	infos := map[string]string{}
	for _, s := range f.Status() {
		if s.Info != nil {
			infos[s.Server] = s.Info.Transport + "/" + string(s.Info.Era)
		}
	}
	for name, want := range map[string]string{
		"stateless http": "streamable-http/stateless", "streamable": "streamable-http/initialize", "sse": "sse/initialize",
		"stdio.initialize": "stdio/initialize", "stdio.stateless": "stdio/stateless",
	} {
		if infos[name] != want {
			t.Errorf("%s negotiated %q, want %q", name, infos[name], want)
		}
	}

	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	checkGone(t, initPids, statelessPids)
	if n := len(pids(t, initPids)) + len(pids(t, statelessPids)); n != 2 {
		t.Errorf("%d stdio processes started, want 2", n)
	}
	for _, s := range f.Status() {
		if s.State != StateClosed {
			t.Errorf("%s is %s after Close", s.Server, s.State)
		}
	}
	if _, err := f.Tools(ctxT(t)); err != ErrClosed {
		t.Errorf("Tools after Close: %v, want ErrClosed", err)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
