package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"

	"github.com/anymcp/anymcp/access"
	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/fleet"
)

// Gateway serves a fleet of servers as one MCP server per view, to
// clients of every era. It is safe for concurrent use.
type Gateway struct {
	hub    *hub
	access access.Policy
	meta   string
	views  map[string]*bridge.Bridge
	names  []string // in configuration order

	closeOnce sync.Once
	closeErr  error
}

var viewName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ErrUnknownView is the error of ServeStdio for a view not configured.
var ErrUnknownView = errors.New("no such view")

// New makes a gateway over servers, serving the views of cfg. It checks
// the configuration (server names, patterns, view names) and dials
// nothing: each server is dialled on first use. ctx bounds New only.
func New(ctx context.Context, servers []fleet.Server, cfg Config) (*Gateway, error) {
	if err := checkConfig(servers, cfg); err != nil {
		return nil, err
	}
	views := cfg.Views
	if len(views) == 0 {
		views = []View{{}}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fopts := append([]fleet.Option{fleet.WithLogger(log)}, cfg.Fleet...)
	if cfg.Pins != nil {
		fopts = append(fopts, fleet.WithPins(cfg.Pins))
	}
	g := &Gateway{hub: newHub(servers, fopts, log), views: make(map[string]*bridge.Bridge, len(views)),
		access: cfg.Access, meta: cfg.MetadataURL}
	g.hub.pinned = cfg.Pins != nil
	for _, v := range views {
		o := cfg.Bridge
		if o.Logger == nil {
			o.Logger = log
		}
		if v.Name != "" {
			o.MessagePath = "/message/" + v.Name
		}
		d, err := g.chain(v, cfg, log)
		if err != nil {
			_ = g.Close()
			return nil, err
		}
		b, err := bridge.New(ctx, d, o)
		if err != nil {
			_ = g.Close()
			return nil, fmt.Errorf("view %q: %w", v.Name, err)
		}
		g.views[v.Name] = b
		g.names = append(g.names, v.Name)
	}
	return g, nil
}

// chain is the Dialer of view v, the one place where a view's chain is
// built, outermost first: view(approvals(fleetUpstream)). The view
// filters and renames what the approvals and the fleet see, so both
// see fleet names; approvals gate calls before they reach a server.
func (g *Gateway) chain(v View, cfg Config, log *slog.Logger) (bridge.Dialer, error) {
	toolServer := func(name string) (string, bool) {
		if r, ok := g.hub.tool(name); ok {
			return r.server, true
		}
		if r, ok := g.hub.prompt(name); ok {
			return r.server, true
		}
		return "", false
	}
	uriServer := func(uri string) (string, bool) {
		if s, ok := g.hub.resourceServer(uri); ok {
			return s, true
		}
		return g.hub.templateServer(uri)
	}
	vw, err := newView(v, toolServer, uriServer)
	if err != nil {
		return nil, err
	}
	ownOf := func(lookup func(string) (route, bool)) func(string) (string, bool) {
		return func(name string) (string, bool) {
			r, ok := lookup(name)
			return r.name, ok
		}
	}
	vw.ownNamesFrom(ownOf(g.hub.tool), ownOf(g.hub.prompt), g.hub.promptsNamed)
	ap, err := newApprovals(cfg.Approvals, v.Name, toolServer, log)
	if err != nil {
		return nil, fmt.Errorf("view %q: approvals: %w", v.Name, err)
	}
	return vw.wrap(ap.wrap(g.hub.dialer(vw.heard))), nil
}

// checkConfig refuses a configuration the gateway cannot serve, saying
// why.
func checkConfig(servers []fleet.Server, cfg Config) error {
	if len(servers) == 0 {
		return errors.New("no servers configured: a gateway needs at least one")
	}
	// The fleet's own checks: names unique and not empty, patterns
	// that parse. New dials nothing, and Close ends it at once.
	f, err := fleet.New(servers)
	if err != nil {
		return err
	}
	_ = f.Close()
	if cfg.Access != nil && cfg.Bridge.AuthToken != "" {
		return errors.New("both an access policy and the bridge's own bearer token are set: the access policy checks bearer tokens, so give the token to it")
	}
	seen := map[string]bool{}
	for i, v := range cfg.Views {
		if v.Name != "" && !viewName.MatchString(v.Name) {
			return fmt.Errorf("view %d: name %q: want 1 to 64 of A-Z a-z 0-9 _ -, or \"\" for the default view", i, v.Name)
		}
		if seen[v.Name] {
			if v.Name == "" {
				return errors.New("two default views (named \"\")")
			}
			return fmt.Errorf("two views are named %q", v.Name)
		}
		seen[v.Name] = true
	}
	return nil
}

// Views are the names of the views served, in configuration order ("" is
// the default view).
func (g *Gateway) Views() []string { return append([]string(nil), g.names...) }

// Handler returns the gateway's HTTP faces: the default view at /mcp
// (Streamable HTTP, both eras), /sse and /message (HTTP+SSE); view NAME
// at /mcp/NAME, /sse/NAME and /message/NAME. Each is the bridge's face
// (see package bridge), with its Options' guards. Any other path is 404.
//
// Config.Access admits each request first (access.Loopback when nil).
// A client granted a view is served that view at the default paths,
// and refused every other view's.
func (g *Gateway) Handler() http.Handler {
	faces := make(map[string]http.Handler, len(g.views))
	for name, b := range g.views {
		faces[name] = b.Handler()
	}
	mux := http.NewServeMux()
	names := slices.Collect(maps.Keys(g.views))
	if _, ok := g.views[""]; !ok {
		// The default paths serve a granted view even when no default
		// view is configured.
		names = append(names, "")
	}
	for _, name := range names {
		for _, face := range []string{"/mcp", "/sse", "/message"} {
			path := face
			if name != "" {
				path += "/" + name
			}
			mux.Handle(path, granted(faces, name, face))
		}
	}
	return access.Middleware(g.access, g.meta, mux)
}

// granted serves face of view name (faces holds each view's handler) to
// a client whose grant allows it: a grant of view V is served V at the
// default view's paths and refused any other view's paths.
func granted(faces map[string]http.Handler, name, face string) http.Handler {
	at := make(map[string]http.Handler, len(faces))
	for view, h := range faces {
		at[view] = atPath(face, h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		grant, _ := access.GrantOf(r.Context())
		serve := name
		switch {
		case grant.View == "" || grant.View == name:
		case name == "":
			serve = grant.View
		default:
			http.Error(w, "this client is not granted this view", http.StatusForbidden)
			return
		}
		h, ok := at[serve]
		switch {
		case !ok && serve == "":
			http.NotFound(w, r) // no default view, and no grant of another
			return
		case !ok:
			http.Error(w, "the view this client is granted is not served here", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// atPath serves h as if the request had come to path: the bridge's
// faces are at fixed paths. A request at path already is served as it
// is.
func atPath(path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path && r.URL.RawPath == "" {
			h.ServeHTTP(w, r)
			return
		}
		// One allocation for the request and its URL.
		moved := new(struct {
			r http.Request
			u url.URL
		})
		moved.r, moved.u = *r, *r.URL
		moved.u.Path, moved.u.RawPath = path, ""
		moved.r.URL = &moved.u
		h.ServeHTTP(w, &moved.r)
	})
}

// ServeStdio serves one client of the view named view over r and w, as
// bridge.Bridge.ServeStdio does, until r ends or ctx is done.
func (g *Gateway) ServeStdio(ctx context.Context, view string, r io.Reader, w io.Writer) error {
	b, ok := g.views[view]
	if !ok {
		return fmt.Errorf("view %q: %w", view, ErrUnknownView)
	}
	return b.ServeStdio(ctx, r, w)
}

// Close ends every view's sessions and streams, and closes every
// upstream connection: no server process and no goroutine of the
// gateway's is left when it returns.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		var errs []error
		for _, name := range g.names {
			if err := g.views[name].Close(); err != nil {
				errs = append(errs, fmt.Errorf("view %q: %w", name, err))
			}
		}
		g.closeErr = errors.Join(errs...)
	})
	return g.closeErr
}
