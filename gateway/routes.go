package gateway

import (
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcp"
)

// hub is what every fleet of a gateway shares: the servers as
// configured, their order, and the routes any fleet's listing taught.
// Fleet names depend only on the configuration and on each server's own
// names (docs/fleet.md), so a route learnt by one fleet (the stateless
// clients' shared one, say) holds in every other: a session's fleet, or
// a call's own, routes a call without listing every server first.
type hub struct {
	servers   []fleet.Server
	order     map[string]int // server name → its index in servers
	fleetOpts []fleet.Option
	log       *slog.Logger
	// pinned: the fleets hold back changed tools (Config.Pins), so a
	// call is routed by the calling fleet's own listing only.
	pinned bool

	mu           sync.Mutex
	tools        map[string]route  // fleet name → server, tool's own name
	prompts      map[string]route  // fleet name → server, prompt's own name
	resources    map[string]string // URI → server (the first in configuration order)
	templates    []fleet.Template  // in configuration order, one per template text
	instructions map[string]string // server → its instructions, once connected
	collided     map[string]bool   // "uri\x00server" collisions logged
}

type route struct{ server, name string }

func newHub(servers []fleet.Server, opts []fleet.Option, log *slog.Logger) *hub {
	h := &hub{servers: servers, fleetOpts: opts, log: log, order: make(map[string]int, len(servers)),
		tools: map[string]route{}, prompts: map[string]route{}, resources: map[string]string{},
		instructions: map[string]string{}, collided: map[string]bool{}}
	for i, s := range servers {
		h.order[s.Name] = i
	}
	return h
}

func (h *hub) byOrder(a, b string) int { return h.order[a] - h.order[b] }

func (h *hub) learnTools(ts []fleet.Tool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range ts {
		h.tools[t.Name] = route{t.Server, t.Tool.Name}
	}
}

func (h *hub) learnPrompts(ps []fleet.Prompt) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range ps {
		h.prompts[p.Name] = route{p.Server, p.Prompt.Name}
	}
}

func (h *hub) tool(name string) (route, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.tools[name]
	return r, ok
}

func (h *hub) prompt(name string) (route, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.prompts[name]
	return r, ok
}

// promptsNamed are the fleet names of the prompts whose own name is own.
func (h *hub) promptsNamed(own string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for name, r := range h.prompts {
		if r.name == own {
			out = append(out, name)
		}
	}
	return out
}

// mergeResources applies the collision rule to a listing: a URI (or a
// template's text) two servers list belongs to the first of them in
// configuration order; the others' are left out, and logged once. It
// returns the merged listing, in configuration order, and learns its
// routes.
func (h *hub) mergeResources(cat *fleet.ResourceCatalogue) ([]fleet.Resource, []fleet.Template) {
	res := slices.Clone(cat.Resources)
	slices.SortStableFunc(res, func(a, b fleet.Resource) int { return h.byOrder(a.Server, b.Server) })
	tpl := slices.Clone(cat.Templates)
	slices.SortStableFunc(tpl, func(a, b fleet.Template) int { return h.byOrder(a.Server, b.Server) })

	owner := make(map[string]string, len(res))
	keptRes := res[:0]
	for _, r := range res {
		if first, dup := owner[r.Resource.URI]; dup {
			if first != r.Server {
				h.collision("resource", r.Resource.URI, first, r.Server)
			}
			continue
		}
		owner[r.Resource.URI] = r.Server
		keptRes = append(keptRes, r)
	}
	tplOwner := make(map[string]string, len(tpl))
	keptTpl := tpl[:0]
	for _, t := range tpl {
		if first, dup := tplOwner[t.Template.URITemplate]; dup {
			if first != t.Server {
				h.collision("resource template", t.Template.URITemplate, first, t.Server)
			}
			continue
		}
		tplOwner[t.Template.URITemplate] = t.Server
		keptTpl = append(keptTpl, t)
	}
	h.mu.Lock()
	// A server left out of this listing (it failed) keeps the routes an
	// earlier one taught.
	for uri, s := range h.resources {
		if _, ok := owner[uri]; !ok && cat.Errors[s] != nil {
			owner[uri] = s
		}
	}
	h.resources = owner
	var old []fleet.Template
	for _, t := range h.templates {
		if cat.Errors[t.Server] != nil {
			old = append(old, t)
		}
	}
	h.templates = append(slices.Clone(keptTpl), old...)
	slices.SortStableFunc(h.templates, func(a, b fleet.Template) int { return h.byOrder(a.Server, b.Server) })
	h.mu.Unlock()
	return keptRes, keptTpl
}

func (h *hub) collision(what, uri, first, other string) {
	key := uri + "\x00" + other
	h.mu.Lock()
	seen := h.collided[key]
	h.collided[key] = true
	h.mu.Unlock()
	if !seen {
		h.log.Warn("anymcp gateway: two servers list one "+what+"; the first in the configuration serves it",
			"uri", uri, "served_by", first, "left_out", other)
	}
}

// resourceServer returns the server of uri: the one whose listing has it,
// else the first (in configuration order) with a template that matches.
func (h *hub) resourceServer(uri string) (server string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.resources[uri]; ok {
		return s, true
	}
	for _, t := range h.templates {
		if matchTemplate(t.Template.URITemplate, uri) {
			return t.Server, true
		}
	}
	return "", false
}

// templateServer returns the server whose template's text is t.
func (h *hub) templateServer(t string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range h.templates {
		if x.Template.URITemplate == t {
			return x.Server, true
		}
	}
	return "", false
}

// noteInfo records what a server said of itself when it connected.
func (h *hub) noteInfo(server string, info *client.Info) {
	if info == nil {
		return
	}
	h.mu.Lock()
	h.instructions[server] = info.Instructions
	h.mu.Unlock()
}

// maxInstructions bounds the instructions the gateway gives its clients.
const maxInstructions = 8 << 10

// instructionsText is every connected server's instructions, each under
// its name, in configuration order, at most maxInstructions bytes.
func (h *hub) instructionsText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, s := range h.servers {
		text := strings.TrimSpace(h.instructions[s.Name])
		if text == "" {
			continue
		}
		block := "## " + s.Name + "\n" + text + "\n\n"
		if b.Len()+len(block) > maxInstructions {
			rest := maxInstructions - b.Len() - len("…")
			if rest > 0 {
				b.WriteString(strings.ToValidUTF8(block[:rest], ""))
				b.WriteString("…")
			}
			break
		}
		b.WriteString(block)
	}
	return strings.TrimSpace(b.String())
}

// serverNames are the enabled servers, in configuration order.
func (h *hub) serverNames() []string {
	out := make([]string, 0, len(h.servers))
	for _, s := range h.servers {
		if !s.Disabled {
			out = append(out, s.Name)
		}
	}
	return out
}

// infoOf is the gateway's own identity, capabilities and instructions.
func (h *hub) info() client.Info {
	return client.Info{
		Transport:       "fleet",
		Era:             mcp.EraInitialize,
		ProtocolVersion: mcp.Version20251125,
		ServerInfo:      mcp.Implementation{Name: ServerName, Version: client.Version},
		Capabilities: mcp.ServerCapabilities{
			Logging:     &struct{}{},
			Completions: &struct{}{},
			Prompts:     &mcp.ListChanged{ListChanged: true},
			Resources:   &mcp.ResourcesCap{Subscribe: true, ListChanged: true},
			Tools:       &mcp.ListChanged{ListChanged: true},
		},
		Instructions: h.instructionsText(),
	}
}
