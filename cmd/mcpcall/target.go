package main

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
)

// target is what a command connects to, resolved from the end of the
// command line, --server/--config, and the config files.
type target struct {
	url     string
	header  [][2]string // name, value: from the config entry, then -H, then --bearer-env
	cmd     *stdio.Command
	policy  negotiate.TransportPolicy
	name    string           // the server name, when it came from a config file
	source  string           // the config file
	oauth   *mcpconfig.OAuth // the config entry's OAuth client, expanded
	display string           // for messages
	socket  string           // a session's socket (--session, @NAME): cmd and url unset
}

func (t *target) isCommand() bool { return t.cmd != nil }

// splitTarget separates a command's own arguments from its target: the
// arguments after `--` (a command), --server NAME, or the last argument
// (a URL, FILE:NAME, or a server name).
func (c *cli) splitTarget(cmd *cobra.Command, args []string) ([]string, *target, error) {
	own, err := c.splitOwn(cmd, args)
	if err != nil {
		return nil, nil, err
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		t, err := c.commandTarget(args[dash], args[dash+1:], nil, "")
		return own, t, err
	}
	if c.f.session != "" {
		t, err := c.sessionTarget(cmd.Context(), c.f.session)
		return own, t, err
	}
	if c.f.server != "" {
		t, err := c.configTarget(c.f.config, c.f.server)
		return own, t, err
	}
	last := args[len(args)-1]
	if name, ok := strings.CutPrefix(last, "@"); ok {
		// @NAME is a session, always: no URL, command or FILE:NAME starts
		// with @; a config server so named is reached with --server.
		t, err := c.sessionTarget(cmd.Context(), name)
		return own, t, err
	}
	if strings.HasPrefix(last, "http://") || strings.HasPrefix(last, "https://") {
		t, err := c.urlTarget(last, nil, negotiate.TransportAuto)
		return own, t, err
	}
	if c.f.config != "" {
		t, err := c.configTarget(c.f.config, last)
		return own, t, err
	}
	if file, name, ok := splitFileName(last); ok {
		t, err := c.configTarget(file, name)
		return own, t, err
	}
	t, err := c.configTarget("", last)
	return own, t, err
}

// splitOwn is the command's own arguments, the ones before its target,
// found as splitTarget finds them but without resolving the target. Its
// errors are the line's: no target, or two.
func (c *cli) splitOwn(cmd *cobra.Command, args []string) ([]string, error) {
	if c.f.session != "" && c.f.server != "" {
		return nil, usageErr("give either --session or --server, not both")
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if c.f.server != "" {
			return nil, usageErr("give either --server or `-- command`, not both")
		}
		if c.f.session != "" {
			return nil, usageErr("give either --session or `-- command`, not both")
		}
		if dash == len(args) {
			return nil, usageErr("no command after `--`")
		}
		return args[:dash], nil
	}
	if c.f.server != "" || c.f.session != "" {
		return args, nil
	}
	if len(args) == 0 {
		return nil, usageErr("no target: end the line with a URL, a server name, or `-- command args...`")
	}
	last, own := args[len(args)-1], args[:len(args)-1]
	if strings.HasPrefix(last, "http://") || strings.HasPrefix(last, "https://") || c.f.config != "" {
		return own, nil
	}
	if _, _, ok := splitFileName(last); ok {
		return own, nil
	}
	if strings.Contains(last, "://") {
		return nil, usageErr("target %q: only http and https URLs are supported; for a command, put it after `--`", origin.RedactString(last))
	}
	if looksLikePair(last) {
		return nil, usageErr("no target: %q is an argument; end the line with a URL, a server name, or `-- command args...`", last)
	}
	return own, nil
}

// targetArgs checks the arguments of a command with a target: its own,
// before the target, number between minOwn and maxOwn (maxOwn < 0: any).
func (c *cli) targetArgs(minOwn, maxOwn int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		own, err := c.splitOwn(cmd, args)
		if err != nil {
			return err
		}
		if len(own) < minOwn || (maxOwn >= 0 && len(own) > maxOwn) {
			return usageErr("%s: wrong number of arguments before the target (usage: %s)", cmd.CommandPath(), cmd.UseLine())
		}
		return nil
	}
}

// splitFileName reads FILE:NAME when FILE exists.
func splitFileName(s string) (file, name string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	if st, err := os.Stat(s[:i]); err != nil || st.IsDir() {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// configTarget looks a server name up: in file only, or along the search
// order when file is "".
func (c *cli) configTarget(file, name string) (*target, error) {
	e, err := c.findServer(file, name)
	if err != nil {
		return nil, err
	}
	r, err := e.Resolve(c.lookupEnv)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	var t *target
	if r.Kind == mcpconfig.KindStdio {
		if t, err = c.commandTarget(r.Command, r.Args, r.Env, r.Dir); err != nil {
			return nil, err
		}
	} else {
		var hs [][2]string
		for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
			hs = append(hs, [2]string{k, r.Headers[k]})
		}
		if t, err = c.urlTarget(r.URL, hs, r.Policy); err != nil {
			return nil, usageErr("%v", &mcpconfig.EntryError{Server: name, File: e.Source, Field: "url", Err: err})
		}
		t.oauth = r.OAuth
	}
	t.name, t.source = name, e.Source
	t.display = fmt.Sprintf("%s (%s, %s)", name, e.Source, t.display)
	return t, nil
}

// urlTarget checks an http(s) URL and applies the HTTP flags.
func (c *cli) urlTarget(raw string, header [][2]string, policy negotiate.TransportPolicy) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErr("target %q is not an http(s) URL", origin.RedactString(raw))
	}
	if len(c.f.env) > 0 || c.f.cwd != "" || c.f.inherit {
		return nil, usageErr("-e, --cwd and --inherit-env are for stdio servers; %s is a URL", origin.RedactString(raw))
	}
	t := &target{url: raw, header: header, policy: policy, display: origin.RedactString(raw)}
	// -H and --bearer-env replace the config entry's headers of the same
	// name; repeated -H of one name are all sent.
	var flagHeaders [][2]string
	for _, h := range c.f.headers {
		name, value, ok := strings.Cut(h, ":")
		if name = strings.TrimSpace(name); !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, usageErr("-H %q: want \"Name: value\"", h)
		}
		flagHeaders = append(flagHeaders, [2]string{name, strings.TrimSpace(value)})
	}
	if c.f.bearerEnv != "" {
		token, _ := c.lookupEnv(c.f.bearerEnv)
		if token = strings.TrimSpace(token); token == "" {
			return nil, usageErr("--bearer-env %s: the variable is unset or empty", c.f.bearerEnv)
		}
		flagHeaders = slices.DeleteFunc(flagHeaders, func(h [2]string) bool { return strings.EqualFold(h[0], "Authorization") })
		flagHeaders = append(flagHeaders, [2]string{"Authorization", "Bearer " + token})
	}
	t.header = slices.DeleteFunc(t.header, func(h [2]string) bool {
		return slices.ContainsFunc(flagHeaders, func(f [2]string) bool { return strings.EqualFold(f[0], h[0]) })
	})
	t.header = append(t.header, flagHeaders...)
	for _, h := range t.header {
		if sensitiveHeader(h[0]) {
			c.sec.add(h[1])
		}
	}
	switch c.f.transport {
	case "":
	case "auto":
		t.policy = negotiate.TransportAuto
	case "http", "streamable-http":
		t.policy = negotiate.StreamableOnly
	case "sse":
		t.policy = negotiate.SSEOnly
	case "stdio":
		return nil, usageErr("--transport stdio needs a command target (`-- command args...` or a stdio server name), not %s", origin.RedactString(raw))
	default:
		return nil, usageErr("--transport %q: want auto, http, sse or stdio", c.f.transport)
	}
	return t, nil
}

// commandTarget builds a stdio target and applies the stdio flags; env
// holds the config entry's variables, which -e overrides.
func (c *cli) commandTarget(path string, args, env []string, dir string) (*target, error) {
	if len(c.f.headers) > 0 || c.f.bearerEnv != "" {
		return nil, usageErr("-H and --bearer-env are for HTTP servers; %s is a command", path)
	}
	switch c.f.transport {
	case "", "auto", "stdio":
	case "http", "sse", "streamable-http":
		return nil, usageErr("--transport %s needs a URL; %s is a command", c.f.transport, path)
	default:
		return nil, usageErr("--transport %q: want auto, http, sse or stdio", c.f.transport)
	}
	for _, kv := range c.f.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, usageErr("-e %q: want KEY=VALUE", kv)
		}
	}
	if c.f.cwd != "" {
		dir = c.f.cwd
	}
	cmd := &stdio.Command{
		Path:       path,
		Args:       args,
		Dir:        dir,
		Env:        append(slices.Clone(env), c.f.env...),
		InheritEnv: c.f.inherit,
	}
	given := cmd.Env
	if cmd.InheritEnv {
		// The server gets this whole environment, credentials and all,
		// and may echo them as well as those given with -e.
		given = append(os.Environ(), given...)
	}
	for _, kv := range given {
		if k, v, _ := strings.Cut(kv, "="); sensitiveEnv(k) && credentialValue(v) {
			c.sec.add(v)
		}
	}
	return &target{cmd: cmd, display: strings.Join(append([]string{path}, args...), " ")}, nil
}
