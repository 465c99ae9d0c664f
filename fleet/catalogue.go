package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/pin"
)

// A member keeps its last listing of each kind. An initialize-era
// server's stays fresh until the server says it changed (list_changed),
// re-initializes or is dialled again; a stateless server's is asked for
// each time, and the Conn answers from its own cache for as long as the
// listing's ttlMs says (client/cache.go). A stopped server's last listing
// is served as it is: listing does not start it.
type kind int

const (
	kindTools kind = iota
	kindPrompts
	kindResources
	kindTemplates
	kinds
)

var allKinds = []kind{kindTools, kindPrompts, kindResources, kindTemplates}

type listCache struct {
	items any  // []Tool (Raw and Tool only), []mcp.Prompt, []mcp.Resource, []mcp.ResourceTemplate
	have  bool // items were listed once
	fresh bool // items may be served without asking
	epoch uint64
}

func (m *member) invalidateLocked(ks ...kind) {
	for _, k := range ks {
		m.lists[k].fresh = false
		m.lists[k].epoch++
	}
}

// listOf returns the member's items of kind k: from its cache, or from
// fetch on its Conn (dialled if need be), bounded by the member's timeout.
func listOf[T any](ctx context.Context, m *member, k kind, fetch func(context.Context, *client.Conn) ([]T, error)) ([]T, error) {
	m.mu.Lock()
	lc := &m.lists[k]
	if lc.have && (lc.fresh || m.state == StateStopped) {
		items := lc.items.([]T)
		m.mu.Unlock()
		return items, nil
	}
	m.mu.Unlock()
	c, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer m.release()
	m.mu.Lock()
	epoch := lc.epoch
	m.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, m.timeout)
	items, err := fetch(lctx, c)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, serverError(m.name(), err)
	}
	m.mu.Lock()
	if m.conn == c && lc.epoch == epoch {
		lc.items, lc.have = items, true
		lc.fresh = c.Info().Era != mcp.EraStateless
	}
	m.mu.Unlock()
	return items, nil
}

// Tool is a tool of the fleet.
type Tool struct {
	// Name is the fleet name: ^[A-Za-z0-9_-]{1,64}$, unique in the fleet,
	// the same on every run and machine for the same configuration.
	Name   string
	Server string   // Server.Name
	Tool   mcp.Tool // decoded from Raw: its own name, schemas byte for byte
	// Raw is the tool object as the server sent it, byte for byte:
	// members in its order, members mcp.Tool lacks kept.
	Raw json.RawMessage
}

// Catalogue is the fleet's tools. Its values share their bytes with the
// fleet's cache and the Conn's: each Raw is a slice of the server's
// answer (client.Conn.RawTools), and Tool's schemas are slices of Raw.
// Read them, do not change them.
type Catalogue struct {
	Tools  []Tool                  // sorted by Name
	Errors map[string]*ServerError // server name → why its tools (with KindHeld, some) are missing
}

// toolIndex is a member's last tool listing under fleet names, as the
// host may see it (Allow, Deny and the tool filter applied).
type toolIndex struct {
	tools  []Tool
	byName map[string]string // fleet name → tool name
	held   map[string]error  // fleet name → why WithPins holds it back
}

// allowed says whether the host lets tool t of m in.
func (m *member) allowed(t mcp.Tool) bool {
	match := func(patterns []string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool { ok, _ := path.Match(p, t.Name); return ok })
	}
	if len(m.srv.Allow) > 0 && !match(m.srv.Allow) || match(m.srv.Deny) {
		return false
	}
	return m.f.opts.toolFilter == nil || m.f.opts.toolFilter(m.name(), t)
}

// listTools returns the member's tools under their fleet names; the
// error is a KindHeld one when WithPins held some back.
func (m *member) listTools(ctx context.Context) ([]Tool, error) {
	tools, held, err := m.scanTools(ctx)
	if err != nil {
		return nil, err
	}
	if held != nil {
		return tools, &ServerError{Server: m.name(), Kind: KindHeld, Err: held}
	}
	return tools, nil
}

// scanTools lists and indexes the member's tools, and says which tools
// WithPins held back.
func (m *member) scanTools(ctx context.Context) ([]Tool, heldTools, error) {
	items, err := listOf(ctx, m, kindTools, func(ctx context.Context, c *client.Conn) ([]Tool, error) {
		if c.Info().Capabilities.Tools == nil {
			return []Tool{}, nil
		}
		return rawTools(ctx, c)
	})
	if err != nil {
		return nil, nil, err
	}
	idx := m.indexTools(items)
	var held heldTools
	if p := m.f.opts.pins; p != nil {
		if idx, held, err = m.pinTools(ctx, p, idx); err != nil {
			m.mu.Lock()
			m.tools = toolIndex{}
			m.mu.Unlock()
			if ctx.Err() != nil {
				return nil, nil, context.Cause(ctx)
			}
			return nil, nil, &ServerError{Server: m.name(), Kind: KindHeld, Err: err}
		}
	}
	m.mu.Lock()
	m.tools = idx
	m.mu.Unlock()
	return idx.tools, held, nil
}

// pinTools leaves out of idx the tools p holds back, and says why.
func (m *member) pinTools(ctx context.Context, p *pin.Pins, idx toolIndex) (toolIndex, heldTools, error) {
	server := strings.NewReplacer("~", "~0", "/", "~1").Replace(m.name()) + "/"
	kept, held, err := pin.Filter(ctx, p, idx.tools, func(t Tool) (string, json.RawMessage) {
		return server + t.Tool.Name, t.Raw
	})
	if err != nil || len(held) == 0 {
		return idx, nil, err
	}
	out := toolIndex{tools: kept, byName: make(map[string]string, len(kept)), held: make(map[string]error, len(held))}
	for _, t := range kept {
		out.byName[t.Name] = t.Tool.Name
	}
	fleetName := make(map[string]string, len(idx.tools))
	for _, t := range idx.tools {
		fleetName[server+t.Tool.Name] = t.Name
	}
	for _, e := range held {
		out.held[fleetName[heldKey(e)]] = e
	}
	return out, held, nil
}

// heldKey is the key of a tool pin.Filter held back.
func heldKey(err error) string {
	if ce, ok := errors.AsType[*pin.ChangedError](err); ok {
		return ce.Key
	}
	if np, ok := errors.AsType[*pin.NotPinnedError](err); ok {
		return np.Key
	}
	return ""
}

// rawTools lists c's tools as the server sent them (Raw), each decoded
// (Tool) with its schemas sharing Raw's bytes; Name and Server are left
// for indexTools.
//
// A stateless server's Raw are slices of its answers, which the Conn's
// cache keeps for as long as their ttlMs says: the catalogue shares them,
// and each listing served from the cache costs no copy. An
// initialize-era server's answers are kept by nothing else: the listing
// is copied once into a buffer of its own size, so that it does not keep
// the answers' read buffers (up to twice their size) alive.
func rawTools(ctx context.Context, c *client.Conn) ([]Tool, error) {
	var raws []json.RawMessage
	size := 0
	for raw, err := range c.RawTools(ctx) {
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
		size += len(raw)
	}
	var buf []byte
	if c.Info().Era != mcp.EraStateless {
		buf = make([]byte, 0, size)
	}
	out := make([]Tool, len(raws))
	for i, raw := range raws {
		if buf != nil {
			buf = append(buf, raw...)
			raw = buf[len(buf)-len(raw) : len(buf) : len(buf)]
		}
		out[i].Raw = raw
		if err := jsondec.UnmarshalShared(raw, &out[i].Tool); err != nil {
			return nil, &client.ResultError{Method: "tools/list", Err: err} // RawTools decoded it: never
		}
	}
	return out, nil
}

// indexTools names a listing: over every tool the server listed (so that
// the host's filters do not change the names), keeping the allowed ones.
// A tool listed twice under one name is kept once, as first listed.
func (m *member) indexTools(items []Tool) toolIndex {
	names := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, t := range items {
		if !seen[t.Tool.Name] {
			seen[t.Tool.Name] = true
			names = append(names, t.Tool.Name)
		}
	}
	fleetNames := toolNames(m.prefix, names)
	idx := toolIndex{byName: make(map[string]string, len(items))}
	for _, t := range items {
		n := fleetNames[t.Tool.Name]
		if _, dup := idx.byName[n]; dup || !m.allowed(t.Tool) {
			continue
		}
		idx.byName[n] = t.Tool.Name
		t.Name, t.Server = n, m.name()
		idx.tools = append(idx.tools, t)
	}
	return idx
}

// Tools returns the catalogue of every enabled server's tools, dialling
// the servers not connected yet. A server that fails is in Errors, never
// a reason to wait past its own timeout. The error is ctx's when ctx ends
// first, or ErrClosed.
func (f *Fleet) Tools(ctx context.Context) (*Catalogue, error) {
	got, errs, err := each(ctx, f, (*member).listTools)
	if err != nil {
		return nil, err
	}
	cat := &Catalogue{Errors: errs}
	for _, ts := range got {
		cat.Tools = append(cat.Tools, ts...)
	}
	slices.SortFunc(cat.Tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return cat, nil
}

// each runs list on every member at once and gathers the results by
// server, and the failures.
func each[T any](ctx context.Context, f *Fleet, list func(*member, context.Context) ([]T, error)) ([][]T, map[string]*ServerError, error) {
	if f.isClosed() {
		return nil, nil, ErrClosed
	}
	got := make([][]T, len(f.members))
	fail := make([]error, len(f.members))
	var wg sync.WaitGroup
	for i, m := range f.members {
		wg.Go(func() { got[i], fail[i] = list(m, ctx) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	if f.isClosed() {
		return nil, nil, ErrClosed
	}
	errs := make(map[string]*ServerError)
	for i, err := range fail {
		if err != nil {
			errs[f.members[i].name()] = serverError(f.members[i].name(), err)
		}
	}
	return got, errs, nil
}

// Lookup returns the server and the tool's own name of a fleet name, as
// the last catalogue had them.
func (f *Fleet) Lookup(name string) (server, tool string, ok bool) {
	m := f.memberOf(name)
	if m == nil {
		return "", "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tool, ok = m.tools.byName[name]
	if !ok {
		return "", "", false
	}
	return m.name(), tool, true
}

// memberOf returns the member whose prefix starts the fleet name, or nil.
func (f *Fleet) memberOf(name string) *member {
	prefix, _, ok := strings.Cut(name, separator)
	if !ok {
		return nil
	}
	return f.byPrefix[prefix]
}

// Prompt is a prompt of the fleet, named as tools are.
type Prompt struct {
	Name   string
	Server string
	Prompt mcp.Prompt
}

// PromptCatalogue is the fleet's prompts (see Catalogue).
type PromptCatalogue struct {
	Prompts []Prompt // sorted by Name
	Errors  map[string]*ServerError
}

type promptIndex struct {
	byName map[string]string // fleet name → prompt name
}

func (m *member) listPrompts(ctx context.Context) ([]Prompt, error) {
	items, err := listOf(ctx, m, kindPrompts, func(ctx context.Context, c *client.Conn) ([]mcp.Prompt, error) {
		if c.Info().Capabilities.Prompts == nil {
			return []mcp.Prompt{}, nil
		}
		return c.AllPrompts(ctx)
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(items))
	for _, p := range items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	fleetNames := toolNames(m.prefix, names)
	idx := promptIndex{byName: make(map[string]string, len(items))}
	out := make([]Prompt, 0, len(items))
	for _, p := range items {
		n := fleetNames[p.Name]
		if _, dup := idx.byName[n]; dup {
			continue
		}
		idx.byName[n] = p.Name
		out = append(out, Prompt{Name: n, Server: m.name(), Prompt: p})
	}
	m.mu.Lock()
	m.prompts = idx
	m.mu.Unlock()
	return out, nil
}

// Prompts returns the catalogue of every enabled server's prompts, as
// Tools does.
func (f *Fleet) Prompts(ctx context.Context) (*PromptCatalogue, error) {
	got, errs, err := each(ctx, f, (*member).listPrompts)
	if err != nil {
		return nil, err
	}
	cat := &PromptCatalogue{Errors: errs}
	for _, ps := range got {
		cat.Prompts = append(cat.Prompts, ps...)
	}
	slices.SortFunc(cat.Prompts, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return cat, nil
}

// Resource is a resource of the fleet: a URI is the server's own, so a
// resource is named by its server and URI.
type Resource struct {
	Server   string
	Resource mcp.Resource
}

// Template is a resource template of the fleet.
type Template struct {
	Server   string
	Template mcp.ResourceTemplate
}

// ResourceCatalogue is the fleet's resources and resource templates (see
// Catalogue). A server is in Errors when either listing failed.
type ResourceCatalogue struct {
	Resources []Resource // sorted by server, then URI
	Templates []Template // sorted by server, then URI template
	Errors    map[string]*ServerError
}

type resourceListing struct {
	resources []Resource
	templates []Template
}

func (m *member) listResources(ctx context.Context) ([]resourceListing, error) {
	res, err := listOf(ctx, m, kindResources, func(ctx context.Context, c *client.Conn) ([]mcp.Resource, error) {
		if c.Info().Capabilities.Resources == nil {
			return []mcp.Resource{}, nil
		}
		return c.AllResources(ctx)
	})
	if err != nil {
		return nil, err
	}
	tpl, err := listOf(ctx, m, kindTemplates, func(ctx context.Context, c *client.Conn) ([]mcp.ResourceTemplate, error) {
		if c.Info().Capabilities.Resources == nil {
			return []mcp.ResourceTemplate{}, nil
		}
		return c.AllResourceTemplates(ctx)
	})
	if err != nil {
		return nil, err
	}
	var l resourceListing
	for _, r := range res {
		l.resources = append(l.resources, Resource{Server: m.name(), Resource: r})
	}
	for _, t := range tpl {
		l.templates = append(l.templates, Template{Server: m.name(), Template: t})
	}
	return []resourceListing{l}, nil
}

// Resources returns the catalogue of every enabled server's resources
// and resource templates, as Tools does.
func (f *Fleet) Resources(ctx context.Context) (*ResourceCatalogue, error) {
	got, errs, err := each(ctx, f, (*member).listResources)
	if err != nil {
		return nil, err
	}
	cat := &ResourceCatalogue{Errors: errs}
	for _, ls := range got {
		for _, l := range ls {
			cat.Resources = append(cat.Resources, l.resources...)
			cat.Templates = append(cat.Templates, l.templates...)
		}
	}
	slices.SortStableFunc(cat.Resources, func(a, b Resource) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Resource.URI, b.Resource.URI))
	})
	slices.SortStableFunc(cat.Templates, func(a, b Template) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Template.URITemplate, b.Template.URITemplate))
	})
	return cat, nil
}
