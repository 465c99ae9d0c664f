package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/negotiate"
)

// A named view is served at /mcp/NAME and /sse/NAME (whose POSTs go to
// /message/NAME), by a bridge of its own; the default view stays at /mcp
// and /sse. A path of no view is 404.
func TestViewPaths(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[1:2], Config{Views: []View{{Name: ""}, {Name: "team"}}})
	for _, view := range []string{"", "/team"} {
		for _, d := range eras {
			d.path += view
			c := dial(t, url, d)
			if got := callText(t, c, "streamable__echo", map[string]any{"text": d.path}); got != d.path {
				t.Errorf("%s: %q", d.path, got)
			}
		}
	}
	for _, path := range []string{"/mcp/other", "/sse/other", "/message/other", "/mcp/team/x"} {
		res, err := http.Post(url+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", path, res.StatusCode)
		}
	}
	// Without a default view, /mcp is no view's.
	_, url = startGateway(t, up.servers()[1:2], Config{Views: []View{{Name: "only"}}})
	res, err := http.Post(url+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("/mcp without a default view: status %d, want 404", res.StatusCode)
	}
}

// A view is served over stdio to clients of both eras; an unknown view
// is refused.
func TestServeStdio(t *testing.T) {
	up := startUpstreams(t)
	g, err := New(ctxT(t), up.servers()[:2], Config{Views: []View{{Name: "team"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.ServeStdio(ctxT(t), "", strings.NewReader(""), io.Discard); !errors.Is(err, ErrUnknownView) {
		t.Errorf("unknown view: %v", err)
	}
	for _, era := range []negotiate.EraPolicy{negotiate.InitializeOnly, negotiate.StatelessOnly} {
		tr, done := testkit.ServeOverPipes(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
			return g.ServeStdio(ctx, "team", r, w)
		})
		c, err := client.Open(ctxT(t), tr, client.WithEra(era))
		if err != nil {
			t.Fatal(err)
		}
		if got := callText(t, c, "stateless__echo", map[string]any{"text": "piped"}); got != "piped" {
			t.Errorf("%v: %q", era, got)
		}
		_ = c.Close()
		if err := <-done; err != nil {
			t.Errorf("%v: ServeStdio: %v", era, err)
		}
	}
}

// The configuration is checked, and each refusal says why.
func TestConfigChecked(t *testing.T) {
	ok := []fleet.Server{{Name: "a", Target: client.URL("http://127.0.0.1:1/mcp")}}
	for _, tc := range []struct {
		servers []fleet.Server
		views   []View
		want    string
	}{
		{nil, nil, "no servers"},
		{[]fleet.Server{ok[0], ok[0]}, nil, `two servers are named "a"`},
		{[]fleet.Server{{Target: ok[0].Target}}, nil, "has no name"},
		{[]fleet.Server{{Name: "a", Target: ok[0].Target, Allow: []string{"["}}}, nil, "pattern"},
		{ok, []View{{Name: "a/b"}}, `name "a/b"`},
		{ok, []View{{Name: strings.Repeat("x", 65)}}, "name"},
		{ok, []View{{Name: "t"}, {Name: "t"}}, `two views are named "t"`},
		{ok, []View{{}, {}}, "two default views"},
	} {
		g, err := New(ctxT(t), tc.servers, Config{Views: tc.views})
		if err == nil {
			g.Close()
			t.Errorf("%+v %+v: accepted", tc.servers, tc.views)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %+v: %v, want it to say %q", tc.servers, tc.views, err, tc.want)
		}
	}
	g, err := New(ctxT(t), ok, Config{Views: []View{{Name: "team-1_A"}}})
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Views(); len(v) != 1 || v[0] != "team-1_A" {
		t.Errorf("views %v", v)
	}
	g.Close()
}
