package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/anymcp/anymcp/access"
	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/pin"
)

// gatewayHelp is what bridge --all adds to bridge's help.
const gatewayHelp = `With --all there is no target: every server of the config files (or of
--config FILE only) is served as one MCP server (package gateway), each tool
under its fleet name. --gateway FILE (JSON) adds views, approvals, pins and
access: see docs/mcpcall.md. A view NAME is served at /mcp/NAME; --view NAME
picks the view served on stdio.

Pins are on by default: each tool's definition is pinned the first time it is
seen, in the pin file (` + "`mcpcall pins list`" + ` shows where), and a tool whose
definition changed later is held back, named on stderr with what changed and
the command that approves it (mcpcall pins approve KEY --all). "pins":
{"file": false} in --gateway FILE turns them off.`

// gatewayFile is the --gateway FILE of bridge --all. Tokens are never
// in it: only the environment variable or file that holds each.
type gatewayFile struct {
	Views     []gatewayView     `json:"views"`
	Approvals *gatewayApprovals `json:"approvals"`
	Pins      *gatewayPins      `json:"pins"`
	Access    *gatewayAccess    `json:"access"`
}

type gatewayView struct {
	Name      string            `json:"name"`
	Allow     []string          `json:"allow"`
	Deny      []string          `json:"deny"`
	Rename    map[string]string `json:"rename"`
	Describe  map[string]string `json:"describe"`
	MaxTools  int               `json:"maxTools"`
	OwnNames  bool              `json:"ownNames"`
	TokenEnv  string            `json:"tokenEnv"`
	TokenFile string            `json:"tokenFile"`
}

type gatewayApprovals struct {
	Require         []string `json:"require"`
	SkipDestructive bool     `json:"skipDestructive"`
	Default         string   `json:"default"` // "deny" or "allow"
	Timeout         string   `json:"timeout"` // a Go duration: "2m"
}

// gatewayPins is "pins": {"file": PATH | true | false}.
type gatewayPins struct {
	File json.RawMessage `json:"file"`
}

type gatewayAccess struct {
	JWT      *gatewayJWT `json:"jwt"`
	Resource string      `json:"resource"`
}

type gatewayJWT struct {
	Issuer    string            `json:"issuer"`
	Audience  string            `json:"audience"`
	JWKSURL   string            `json:"jwksUrl"`
	ViewClaim string            `json:"viewClaim"`
	Views     map[string]string `json:"views"`
}

// maxGatewayFile bounds --gateway FILE.
const maxGatewayFile = 1 << 20

// readGatewayFile reads and checks --gateway FILE: an unknown member is
// refused by name, so that a typo cannot silently leave a gate open, and
// so is a token written in the file.
func readGatewayFile(path string) (*gatewayFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("--gateway: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGatewayFile+1))
	if err != nil {
		return nil, usageErr("--gateway: reading %s: %v", path, err)
	}
	if len(data) > maxGatewayFile {
		return nil, usageErr("--gateway %s: larger than %d bytes", path, maxGatewayFile)
	}
	if name := literalToken(data); name != "" {
		return nil, usageErr("--gateway %s: %s: a token is never written in the file; give tokenEnv (an environment variable's name) or tokenFile (a file's path)", path, name)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var g gatewayFile
	if err := dec.Decode(&g); err != nil {
		return nil, usageErr("--gateway %s: %s", path, strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return nil, usageErr("--gateway %s: more than one JSON value", path)
	}
	return &g, nil
}

// literalToken names the member of a view that holds a token itself
// ("token", "bearer", "authToken"...), or "".
func literalToken(data []byte) string {
	var raw struct {
		Views []map[string]json.RawMessage `json:"views"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return ""
	}
	for i, v := range raw.Views {
		for k := range v {
			switch strings.ToLower(k) {
			case "token", "tokens", "bearer", "authtoken", "auth_token", "secret", "password":
				return fmt.Sprintf("views[%d].%s", i, k)
			}
		}
	}
	return ""
}

// gatewayConfig turns the file (nil: none) and the bridge's options into
// the gateway's Config, with the tokens read from where the file says.
// haveToken says whether HTTP clients must authenticate.
func (c *cli) gatewayConfig(g *gatewayFile, authToken string) (cfg gateway.Config, haveToken bool, pinPath string, err error) {
	if g == nil {
		g = &gatewayFile{}
	}
	tokens := map[string]string{}
	if authToken != "" {
		tokens[authToken] = ""
	}
	for _, v := range g.Views {
		cfg.Views = append(cfg.Views, gateway.View{Name: v.Name, Allow: v.Allow, Deny: v.Deny, Rename: v.Rename, Describe: v.Describe, MaxTools: v.MaxTools, OwnNames: v.OwnNames})
		if v.TokenEnv == "" && v.TokenFile == "" {
			continue
		}
		if v.TokenEnv != "" && v.TokenFile != "" {
			return cfg, false, "", usageErr("--gateway: view %q: give tokenEnv or tokenFile, not both", v.Name)
		}
		tok, err := c.readSecret(v.TokenFile, v.TokenEnv)
		if err != nil {
			return cfg, false, "", err
		}
		if tok == "" {
			return cfg, false, "", usageErr("--gateway: view %q: its token ($%s or %s) is empty or not set", v.Name, v.TokenEnv, v.TokenFile)
		}
		if _, dup := tokens[tok]; dup {
			return cfg, false, "", usageErr("--gateway: view %q: its token is another view's too", v.Name)
		}
		c.sec.add(tok)
		tokens[tok] = v.Name
	}
	if a := g.Approvals; a != nil {
		cfg.Approvals = gateway.Approvals{Require: a.Require, SkipDestructive: a.SkipDestructive}
		switch a.Default {
		case "", "deny":
		case "allow":
			cfg.Approvals.Default = true
		default:
			return cfg, false, "", usageErr("--gateway: approvals.default %q: give \"deny\" or \"allow\"", a.Default)
		}
		if a.Timeout != "" {
			d, err := time.ParseDuration(a.Timeout)
			if err != nil || d <= 0 {
				return cfg, false, "", usageErr("--gateway: approvals.timeout %q: give a duration such as \"2m\"", a.Timeout)
			}
			cfg.Approvals.Timeout = d
		}
		// Each decision is logged by the gateway itself, through
		// cfg.Logger (mcpcall's log): no OnDecision, or every line twice.
	}
	pinPath, err = c.pinFile(g.Pins)
	if err != nil {
		return cfg, false, "", err
	}
	if pinPath != "" {
		cfg.Pins = pin.New(pin.File(pinPath))
	}
	var policies []access.Policy
	if len(tokens) > 0 {
		p, err := access.Tokens(tokens)
		if err != nil {
			return cfg, false, "", usageErr("--gateway: %v", err)
		}
		policies = append(policies, p)
	}
	if ac := g.Access; ac != nil {
		if j := ac.JWT; j != nil {
			p, err := access.JWT(access.JWTConfig{Issuer: j.Issuer, Audience: j.Audience, JWKSURL: j.JWKSURL, ViewClaim: j.ViewClaim, Views: j.Views, Logger: c.log})
			if err != nil {
				return cfg, false, "", usageErr("--gateway: access.jwt: %v", err)
			}
			policies = append(policies, p)
		}
		if ac.Resource != "" {
			md := access.ResourceMetadata{Resource: ac.Resource}
			if ac.JWT != nil {
				md.AuthorizationServers = []string{ac.JWT.Issuer}
			}
			if cfg.MetadataURL, err = md.URL(); err != nil {
				return cfg, false, "", usageErr("--gateway: access.resource: %v", err)
			}
		}
	}
	switch len(policies) {
	case 0:
	case 1:
		cfg.Access = policies[0]
	default:
		cfg.Access = access.Any(policies...)
	}
	return cfg, len(policies) > 0, pinPath, nil
}

// pinFile is the pin file of "pins" (nil: the default): "" when pins are
// off.
func (c *cli) pinFile(p *gatewayPins) (string, error) {
	if p == nil || len(p.File) == 0 || string(p.File) == "true" {
		return c.defaultPinFile()
	}
	if string(p.File) == "false" {
		return "", nil
	}
	var path string
	if err := json.Unmarshal(p.File, &path); err != nil || path == "" {
		return "", usageErr("--gateway: pins.file: give a path, true (the default file) or false")
	}
	return path, nil
}

// defaultPinFile is anymcp/pins.json in the user's configuration
// directory (os.UserConfigDir, read through mcpcall's environment).
func (c *cli) defaultPinFile() (string, error) {
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir, _ = c.lookupEnv("AppData")
	case "darwin", "ios":
		if c.places.Home != "" {
			dir = filepath.Join(c.places.Home, "Library", "Application Support")
		}
	default:
		if v, ok := c.lookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(v) {
			dir = v
		} else if c.places.Home != "" {
			dir = filepath.Join(c.places.Home, ".config")
		}
	}
	if dir == "" {
		return "", usageErr("pins: no configuration directory (set $HOME), give --gateway FILE with \"pins\": {\"file\": PATH}")
	}
	return filepath.Join(dir, "anymcp", "pins.json"), nil
}

// runGateway is bridge --all: the fleet of the config files served as one
// MCP server.
func (c *cli) runGateway(ctx context.Context, bf *bridgeFlags) error {
	if bf.view != "" && bf.listen != "" {
		return usageErr("--view picks the view served on stdio; over HTTP, view NAME is served at /mcp/NAME")
	}
	o, err := c.bridgeOptions(bf)
	if err != nil {
		return err
	}
	gw, err := c.fleetGateway(ctx, bf.gateway, o, func(_ *gatewayFile, _ *gateway.Config, haveToken bool) error {
		return c.checkBridgeListen(bf, haveToken)
	})
	if err != nil {
		return err
	}
	defer gw.Close()
	return c.serveBridge(ctx, bf.listen, func(ctx context.Context) error {
		err := gw.ServeStdio(ctx, bf.view, c.stdin, c.stdout)
		if errors.Is(err, gateway.ErrUnknownView) {
			return usageErr("--view %q: %v (the views are those of --gateway FILE)", bf.view, err)
		}
		return err
	}, gw.Handler(), gw.Close)
}

// servedFleet is the fleet's gateway with its HTTP faces (and the
// protected-resource metadata, when --gateway FILE names a resource).
type servedFleet struct {
	*gateway.Gateway
	handler http.Handler
}

func (s *servedFleet) Handler() http.Handler { return s.handler }

// fleetGateway builds the gateway of the fleet of the config files (or of
// --config only), with the views, approvals, pins and access of the
// --gateway file at path ("": none) and o for its faces. bridge --all
// serves it, and so does a session started with --all. admit is called
// before any server is read, with whether clients must authenticate: it
// checks where the gateway is served, and may set cfg.Access. Nothing is
// dialled yet: each server is connected on first use.
func (c *cli) fleetGateway(ctx context.Context, path string, o bridge.Options, admit func(g *gatewayFile, cfg *gateway.Config, haveToken bool) error) (*servedFleet, error) {
	var g *gatewayFile
	if path != "" {
		var err error
		if g, err = readGatewayFile(path); err != nil {
			return nil, err
		}
	}
	cfg, haveToken, pinPath, err := c.gatewayConfig(g, o.AuthToken)
	if err != nil {
		return nil, err
	}
	if err := admit(g, &cfg, haveToken); err != nil {
		return nil, err
	}
	run, servers, err := c.fleetServers(nil, false)
	if err != nil {
		return nil, err
	}
	for name, err := range run.configErrs {
		fmt.Fprintf(c.stderr, "mcpcall: server %s: %s: %s\n", name, kindConfig, oneLine(err.Error()))
	}
	if cfg.Access != nil {
		o.AuthToken = "" // Access checks it, with the views' tokens
	}
	cfg.Bridge = o
	cfg.Fleet = c.fleetOptions()
	cfg.Logger = slog.New(&heldHandler{Handler: c.log.Handler(), c: c, approve: c.pinsFlags(pinPath)})
	gw, err := gateway.New(ctx, servers, cfg)
	if err != nil {
		return nil, usageErr("--gateway: %v", err)
	}
	c.log.Info("serving the fleet", "servers", len(servers), "views", gw.Views())
	handler := gw.Handler()
	if g != nil && g.Access != nil && cfg.MetadataURL != "" {
		handler, err = withMetadata(handler, g.Access, cfg.MetadataURL)
		if err != nil {
			gw.Close()
			return nil, usageErr("--gateway: access.resource: %v", err)
		}
	}
	return &servedFleet{gw, handler}, nil
}

// withMetadata serves the protected-resource metadata beside handler.
func withMetadata(handler http.Handler, ac *gatewayAccess, metadataURL string) (http.Handler, error) {
	md := access.ResourceMetadata{Resource: ac.Resource}
	if ac.JWT != nil {
		md.AuthorizationServers = []string{ac.JWT.Issuer}
	}
	h, err := md.Handler()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(metadataURL)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(u.Path, h)
	mux.Handle("/", handler)
	return mux, nil
}

// heldHandler passes the gateway's logs on, and for each tool the pins
// hold back writes on stderr what changed and the command that approves
// it.
type heldHandler struct {
	slog.Handler
	c       *cli
	approve string // pins approve's flags
}

func (h *heldHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "err" {
			return true
		}
		err, ok := a.Value.Any().(error)
		if !ok {
			return true
		}
		for _, e := range heldErrors(err) {
			fmt.Fprintf(h.c.stderr, "mcpcall: %s\n  approve it: mcpcall pins approve %s%s\n", oneLine(e.Error()), shellQuote(e.Key), h.approve)
		}
		return true
	})
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// Enabled lets the gateway's warnings through whatever the log level, so
// that a held tool is named even with logs off.
func (h *heldHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.Handler.Enabled(ctx, l)
}

func (h *heldHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &heldHandler{Handler: h.Handler.WithAttrs(as), c: h.c, approve: h.approve}
}

func (h *heldHandler) WithGroup(name string) slog.Handler {
	return &heldHandler{Handler: h.Handler.WithGroup(name), c: h.c, approve: h.approve}
}

// heldErrors are the *pin.ChangedError in err's tree.
func heldErrors(err error) []*pin.ChangedError {
	var out []*pin.ChangedError
	var walk func(error)
	walk = func(err error) {
		if ce, ok := err.(*pin.ChangedError); ok {
			out = append(out, ce)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			if e := u.Unwrap(); e != nil {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

// pinsFlags are the flags mcpcall pins approve needs to find the same
// servers and pin file as this run.
func (c *cli) pinsFlags(pinPath string) string {
	var s string
	if c.f.config != "" {
		s += " --config " + shellQuote(c.f.config)
	}
	if pinPath != "" {
		if def, err := c.defaultPinFile(); err != nil || def != pinPath {
			s += " --file " + shellQuote(pinPath)
		}
	}
	return s
}
