package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
)

// fleetHelp is what --all means, for the help of the commands that take it.
const fleetHelp = `With --all there is no target: every server of the config files (or of
--config FILE only) is used at once, as a fleet (package fleet): each tool under
its fleet name, SERVER__TOOL cleaned to [A-Za-z0-9_-] and at most 64
characters, the same on every run. Servers are connected in parallel, each
within --connect-timeout; a server that fails is named on stderr, one line
each, and the rest answer. The exit status is 0 when at least one server
answered. A server's settings (headers, environment, OAuth client, disabled,
includeTools/excludeTools) come from its entry: the flags that set one
server's (-H, -e, --bearer-env, --client-id, ...) are refused.`

// kindConfig is the kind of a server whose config entry cannot be used,
// in the errors of --all --json.
const kindConfig = "config"

// oneServerFlags are the flags that set one server's connection; with
// --all every server's come from its config entry.
var oneServerFlags = []string{
	"server", "header", "bearer-env", "env", "cwd", "inherit-env", "transport", "trace",
	"client-id", "client-secret-env", "client-issuer", "client-metadata-url", "grant", "assertion-file", "scope",
}

// fleetRun is the fleet of one --all command.
type fleetRun struct {
	f *fleet.Fleet
	// configErrs are the entries left out: server name → why.
	configErrs map[string]error
	answers    []client.Option
	log        *slog.Logger
}

// checkFleetLine refuses what --all cannot take: a target, or a flag
// that sets one server's connection.
func (c *cli) checkFleetLine(cmd *cobra.Command) error {
	if cmd.ArgsLenAtDash() >= 0 {
		return usageErr("--all uses the servers of the config files: give no target (no `-- command`)")
	}
	for _, name := range oneServerFlags {
		if cmd.Flags().Changed(name) {
			return usageErr("--%s sets one server's connection; with --all each server's settings come from its config entry", name)
		}
	}
	return nil
}

// openFleet makes the fleet of the config files (or of --config only).
// Nothing is dialled yet. only, when set, is given the names of every
// configured server and returns those to keep.
func (c *cli) openFleet(only func(names []string) []string) (*fleetRun, error) {
	run, servers, err := c.fleetServers(only, true)
	if err != nil {
		return nil, err
	}
	f, err := fleet.New(servers, c.fleetOptions()...)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	run.f = f
	return run, nil
}

// fleetOptions are the options of every fleet mcpcall makes: each server
// within --connect-timeout, its logs shown as mcpcall shows a server's.
func (c *cli) fleetOptions() []fleet.Option {
	timeout := c.f.connectTimeout
	if timeout == 0 {
		timeout = math.MaxInt64 // --connect-timeout 0: no limit
	}
	return []fleet.Option{
		fleet.WithConnectTimeout(timeout),
		fleet.WithLogger(c.log),
		fleet.OnLog(func(server string, p mcp.LoggingMessageParams) { serverLog(c.serverLog.With("server", server), p) }),
	}
}

// fleetServers reads the servers of the config files (or of --config
// only), as openFleet does, without making a fleet of them. With answers,
// the servers' requests are answered as the flags say (--elicit, ...);
// without, whoever serves the fleet answers them (bridge --all).
func (c *cli) fleetServers(only func(names []string) []string, answers bool) (*fleetRun, []fleet.Server, error) {
	locs := c.places.SearchOrder()
	if c.f.config != "" {
		locs = []mcpconfig.Location{c.places.File(c.f.config)}
	}
	entries, problems := c.places.Load(locs)
	if c.f.config != "" && len(problems) > 0 {
		return nil, nil, usageErr("%v", problems[0])
	}
	for _, p := range problems {
		c.log.Warn("config file skipped", "err", p)
	}
	if _, err := negotiate.ParseEraPolicy(c.f.era); err != nil {
		return nil, nil, usageErr("--era: %v", err)
	}
	if c.f.protocol != "" && mcp.EraOf(c.f.protocol) == "" {
		return nil, nil, usageErr("--protocol-version %s: this client speaks %s", c.f.protocol, strings.Join(negotiate.ClientVersions(), ", "))
	}
	run := &fleetRun{configErrs: map[string]error{}, log: c.log}
	if answers {
		opts, err := c.answerOptions()
		if err != nil {
			return nil, nil, err
		}
		run.answers = opts
	}
	servers, errs := fleet.FromConfig(entries, fleet.ConfigOptions{
		Lookup:        c.lookupEnv,
		ServerOptions: func(r *mcpconfig.Resolved) ([]client.Option, error) { return c.fleetServerOptions(run, r) },
		Command:       c.fleetCommand,
	})
	for _, err := range errs {
		var ee *mcpconfig.EntryError
		if errors.As(err, &ee) {
			run.configErrs[ee.Server] = err
		}
	}
	if only != nil {
		names := slices.Collect(maps.Keys(run.configErrs))
		for _, s := range servers {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		keep := only(names)
		servers = slices.DeleteFunc(servers, func(s fleet.Server) bool { return !slices.Contains(keep, s.Name) })
		maps.DeleteFunc(run.configErrs, func(name string, _ error) bool { return !slices.Contains(keep, name) })
	}
	if len(servers) == 0 && len(errs) == 0 {
		return nil, nil, usageErr("--all: no config file defines servers (see `mcpcall servers --help`)")
	}
	return run, servers, nil
}

// close ends the fleet: every connection, every process.
func (run *fleetRun) close() {
	if err := run.f.Close(); err != nil {
		run.log.Debug("closing the fleet", "err", err)
	}
}

// fleetServerOptions are a server's options, as c.dial gives one: the
// client's name, timeouts, era, the answers to the server's requests,
// and for an HTTP server without an Authorization header of its own the
// OAuth tokens kept by mcpcall auth login (a login is never started).
// The credentials of its entry are hidden in all mcpcall writes.
func (c *cli) fleetServerOptions(run *fleetRun, r *mcpconfig.Resolved) ([]client.Option, error) {
	era, _ := negotiate.ParseEraPolicy(c.f.era) // checked in openFleet
	opts := []client.Option{
		client.WithClientInfo("mcpcall", moduleVersion()),
		client.WithLogger(c.log.With("server", r.Name)),
		client.WithDefaultTimeout(c.f.timeout),
		client.WithEra(era),
	}
	if c.probeTimeout > 0 {
		opts = append(opts, client.WithProbeTimeout(c.probeTimeout))
	}
	if c.f.protocol != "" {
		opts = append(opts, client.WithProtocolVersion(c.f.protocol))
	}
	opts = append(opts, run.answers...)
	if r.Kind == mcpconfig.KindStdio {
		for _, kv := range r.Env {
			if k, v, _ := strings.Cut(kv, "="); sensitiveEnv(k) && credentialValue(v) {
				c.sec.add(v)
			}
		}
		return opts, nil
	}
	t := &target{url: r.URL, oauth: r.OAuth, name: r.Name, source: r.Source, display: r.Name}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		t.header = append(t.header, [2]string{k, r.Headers[k]})
		if sensitiveHeader(k) {
			c.sec.add(r.Headers[k])
		}
	}
	if hasAuthorization(t) {
		return opts, nil
	}
	cfg, err := c.authConfig(t)
	if err != nil {
		return nil, err
	}
	a, err := newAuthorizer(cfg)
	if err != nil {
		return nil, err
	}
	return append(opts, client.WithAuth(a)), nil
}

// fleetCommand sets up a stdio server of the fleet: its stderr is shown
// with -v only, each line a log record naming the server (many servers
// writing to one terminal are noise otherwise).
func (c *cli) fleetCommand(r *mcpconfig.Resolved, cmd *stdio.Command) {
	cmd.Logger = c.log.With("server", r.Name)
	cmd.KillWithParent = c.serversDieWithUs
	if c.f.verbose {
		cmd.StderrLogger = c.log.With("server", r.Name)
	}
}

// fleetError is one server's failure, as --all --json writes it.
type fleetError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// failures merges the servers a catalogue is missing and the entries left
// out; disabled servers are there too, of kind "disabled".
func (run *fleetRun) failures(errs map[string]*fleet.ServerError) map[string]fleetError {
	out := make(map[string]fleetError, len(errs)+len(run.configErrs))
	for name, e := range errs {
		msg := e.Kind
		if e.Err != nil {
			msg = e.Err.Error()
		}
		out[name] = fleetError{Kind: e.Kind, Message: msg}
	}
	for name, err := range run.configErrs {
		out[name] = fleetError{Kind: kindConfig, Message: err.Error()}
	}
	return out
}

// reportFailures writes, in text mode, one line per server that failed
// (not the disabled ones: they failed nobody).
func (c *cli) reportFailures(failed map[string]fleetError) {
	if c.f.json {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(failed)) {
		e := failed[name]
		if e.Kind == fleet.KindDisabled {
			continue
		}
		fmt.Fprintf(c.stderr, "mcpcall: server %s: %s: %s\n", name, e.Kind, oneLine(e.Message))
	}
}

// oneLine joins a message's lines (a stdio server's stderr tail may end
// one) so that each failing server is one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// noneAnswered is the error of a fleet command when no server answered:
// its exit status is the failures' (all timeouts: 6; all authorization:
// 3; every entry unusable: 2; else 4).
func noneAnswered(failed map[string]fleetError) error {
	kinds := map[string]int{}
	enabled := 0
	for _, e := range failed {
		if e.Kind != fleet.KindDisabled {
			kinds[e.Kind]++
			enabled++
		}
	}
	if enabled == 0 {
		return usageErr("--all: every configured server is disabled")
	}
	err := fmt.Errorf("--all: none of the %d servers answered", enabled)
	switch {
	case kinds[fleet.KindTimeout] == enabled:
		return &exitError{code: exitTimeout, kind: kindTimeout, err: err}
	case kinds[fleet.KindAuth] == enabled:
		return &exitError{code: exitAuth, kind: kindAuth, err: err}
	case kinds[kindConfig] == enabled:
		return &exitError{code: exitUsage, kind: kindUsage, err: err}
	}
	return &exitError{code: exitConnect, kind: kindConnect, err: err}
}

// answered reports whether any server is in the catalogue: it listed,
// even if it has no tools (or none the filters let through).
func answered(run *fleetRun, failed map[string]fleetError) bool {
	for _, s := range run.f.Status() {
		if _, bad := failed[s.Server]; !bad && s.State != fleet.StateDisabled {
			return true
		}
	}
	return false
}

// fleetTool is one tool as --all --json writes it: its fleet name and
// server beside the tool object as the server sent it (fleet.Tool.Raw).
type fleetTool struct {
	Name   string          `json:"name"`
	Server string          `json:"server"`
	Tool   json.RawMessage `json:"tool"`
	Score  *float64        `json:"score,omitempty"`
	typed  mcp.Tool        // the text output's
}

func newFleetTool(t fleet.Tool) fleetTool {
	return fleetTool{Name: t.Name, Server: t.Server, Tool: t.Raw, typed: t.Tool}
}

// writeAsSent writes v as one indented JSON document, each tool object
// in it as the server sent it (marshalAsSent).
func (c *cli) writeAsSent(v any) error {
	b, err := marshalAsSent(v)
	if err != nil {
		return err
	}
	return writeIndented(c.stdout, b)
}

// printFleetTools writes tools: in text, each one's signature under its
// fleet name, its server, and its description's first line.
func (c *cli) printFleetTools(tools []fleetTool) {
	for _, t := range tools {
		line := signature(t.Name, parseSchema(t.typed.InputSchema)) + "  [" + t.Server + "]"
		if t.Score != nil {
			line = fmt.Sprintf("%5.2f  %s", *t.Score, line)
		}
		fmt.Fprintln(c.stdout, line)
		if d := firstLine(t.typed.Description); d != "" {
			fmt.Fprintln(c.stdout, "    "+d)
		}
	}
}

// fleetList is tools list --all.
func (c *cli) fleetList(ctx context.Context) error {
	run, err := c.openFleet(nil)
	if err != nil {
		return err
	}
	defer run.close()
	cat, err := run.f.Tools(ctx)
	if err != nil {
		return err
	}
	failed := run.failures(cat.Errors)
	tools := make([]fleetTool, len(cat.Tools))
	for i, t := range cat.Tools {
		tools[i] = newFleetTool(t)
	}
	if c.f.json {
		if err := c.writeAsSent(struct {
			Tools  []fleetTool           `json:"tools"`
			Errors map[string]fleetError `json:"errors"`
		}{tools, failed}); err != nil {
			return err
		}
	} else {
		c.printFleetTools(tools)
	}
	c.reportFailures(failed)
	if !answered(run, failed) {
		return noneAnswered(failed)
	}
	return nil
}

// fleetCall is tools call NAME --all: the fleet's catalogue says which
// server and tool NAME is, and the call goes to that server's
// connection as tools call sends it to one server (the same arguments,
// checks and output). Where the documented naming tells NAME's server
// from its prefix alone, only that server is connected (the names of a
// fleet of it alone are the same); else the whole fleet is listed.
func (c *cli) fleetCall(ctx context.Context, name string, pairs []string, argsFlag string, noValidate, asTask bool) error {
	run, err := c.openFleet(func(names []string) []string {
		if s := routeServer(name, names); s != "" {
			return []string{s}
		}
		return names
	})
	if err != nil {
		return err
	}
	defer run.close()
	cat, err := run.f.Tools(ctx)
	if err != nil {
		return err
	}
	server, tool, ok := run.f.Lookup(name)
	if !ok {
		return c.unknownFleetTool(name, cat, run.failures(cat.Errors))
	}
	conn, err := run.f.Conn(ctx, server)
	if err != nil {
		return err
	}
	info := conn.Info()
	c.run.lastTr = info.Transport
	s := &session{conn: conn, info: info, c: c, target: &target{display: server, name: server}}
	s.progress = newProgressView(c.stderr, c.f.json, c.stderrTTY)
	defer func() {
		s.progress.finish()
		c.prompt.stop()
	}()
	return c.callTool(ctx, s, tool, pairs, argsFlag, noValidate, asTask)
}

// unknownFleetTool is the error of a fleet name the catalogue does not
// hold: the failure of its server when one failed whose fleet names start
// as name does, else an unknown tool (exit 5) with the closest names.
func (c *cli) unknownFleetTool(name string, cat *fleet.Catalogue, failed map[string]fleetError) error {
	prefix, _, _ := strings.Cut(name, "__")
	for _, server := range slices.Sorted(maps.Keys(failed)) {
		if fleetPrefix(server) == prefix {
			e := failed[server]
			err := fmt.Errorf("tool %s: server %s: %s: %s", name, server, e.Kind, e.Message)
			switch e.Kind {
			case fleet.KindTimeout:
				return &exitError{code: exitTimeout, kind: kindTimeout, err: err}
			case fleet.KindAuth:
				return &exitError{code: exitAuth, kind: kindAuth, err: err}
			case fleet.KindDisabled, kindConfig:
				return usageErr("%v", err)
			}
			return &exitError{code: exitConnect, kind: kindConnect, err: err}
		}
	}
	names := make([]string, len(cat.Tools))
	for i, t := range cat.Tools {
		names[i] = t.Name
	}
	msg := fmt.Sprintf("no tool named %q in the fleet", name)
	if near := closest(name, names, 3); len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	} else {
		msg += " (`mcpcall tools list --all` shows them)"
	}
	c.reportFailures(failed)
	return invalidParamsErr("%s", msg)
}

// fleetPrefix is the prefix of a server's fleet names when it needs no
// hash (docs/fleet.md, "Names"): the name cleaned to [A-Za-z0-9_-],
// runs of "_" made one, "_" trimmed at both ends; "" for a name that
// gets a hash (an empty prefix, or one over 24 characters).
func fleetPrefix(server string) string {
	var b strings.Builder
	for _, r := range server {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-'):
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	p := strings.Trim(b.String(), "_")
	if len(p) > 24 {
		return ""
	}
	return p
}

// routeServer returns the server a fleet name belongs to when its
// prefix alone says so: one server, and only one, has that prefix
// unhashed. "" when it takes the whole catalogue to tell.
func routeServer(name string, servers []string) string {
	prefix, _, ok := strings.Cut(name, "__")
	if !ok || prefix == "" {
		return ""
	}
	found := ""
	for _, s := range servers {
		if fleetPrefix(s) == prefix {
			if found != "" {
				return "" // shared: both get a hash
			}
			found = s
		}
	}
	return found
}

// orFleet runs fleetBody with the command's own arguments when --all is
// given, else single: the command on one target. Its Args are fleetArgs'.
func (c *cli) orFleet(all *bool, fleetBody func(ctx context.Context, own []string) error, single func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if !*all {
			return single(cmd, args)
		}
		return c.runE(func(cmd *cobra.Command, args []string) error {
			return fleetBody(cmd.Context(), args)
		})(cmd, args)
	}
}

// fleetArgs checks the line of a command that takes --all: with it, no
// target, no flag of one server's, and at least minOwn own arguments (a
// command with none takes none); without it, single's check (nil: any).
func (c *cli) fleetArgs(all *bool, minOwn int, single cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if !*all {
			if single == nil {
				return nil
			}
			return single(cmd, args)
		}
		if err := c.checkFleetLine(cmd); err != nil {
			return err
		}
		switch {
		case minOwn == 0 && len(args) > 0:
			return usageErr("%s --all takes no target: %q", cmd.CommandPath(), args[0])
		case len(args) < minOwn:
			return usageErr("%s: wrong number of arguments (usage: %s)", cmd.CommandPath(), cmd.UseLine())
		}
		return nil
	}
}
