package mcpconfig

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
)

// EntryError is an entry that cannot be used: what its file says is wrong,
// or a field whose variables do not expand (Err then wraps, for one, an
// *UnsetVariableError).
type EntryError struct {
	Server string
	File   string
	Field  string // "command", "args", "env", "cwd", "url", "headers", "oauth client id", …; "" for the whole entry
	Err    error
}

func (e *EntryError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("server %q in %s: %v", e.Server, e.File, e.Err)
	}
	return fmt.Sprintf("server %q in %s: %s: %v", e.Server, e.File, e.Field, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Resolved is an entry with its variables expanded: what to connect to.
// A stdio entry fills Command, Args, Env and Dir; an HTTP one URL,
// Headers and Policy.
type Resolved struct {
	Name   string
	Source string // the file
	Kind   Kind

	Command string
	Args    []string
	Env     []string // KEY=VALUE, sorted by key
	Dir     string

	URL     string
	Headers map[string]string
	Policy  negotiate.TransportPolicy // what the entry's type implies
	OAuth   *OAuth                    // nil when the entry says nothing of OAuth
}

// Resolve expands the entry's variables, reading them with lookup (nil
// means os.LookupEnv). An entry with a Problem, a variable that does not
// expand or a URL that is not http(s) is an *EntryError naming the field.
func (e Entry) Resolve(lookup func(string) (string, bool)) (*Resolved, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	fail := func(field string, err error) error {
		return &EntryError{Server: e.Name, File: e.Source, Field: field, Err: err}
	}
	if e.Problem != "" {
		return nil, &EntryError{Server: e.Name, File: e.Source, Err: fmt.Errorf("%s", e.Problem)}
	}
	x := &expander{lookup: lookup, workspace: e.workspace, home: e.home}
	r := &Resolved{Name: e.Name, Source: e.Source, Kind: e.Kind()}
	var err error
	if r.Kind == KindStdio {
		if r.Command, err = x.expand(e.Command); err != nil {
			return nil, fail("command", err)
		}
		if r.Args, err = x.expandAll(e.Args); err != nil {
			return nil, fail("args", err)
		}
		env, err := x.expandMap(e.Env)
		if err != nil {
			return nil, fail("env", err)
		}
		if r.Dir, err = x.expand(e.Cwd); err != nil {
			return nil, fail("cwd", err)
		}
		r.Env = make([]string, 0, len(env))
		for _, k := range slices.Sorted(maps.Keys(env)) {
			r.Env = append(r.Env, k+"="+env[k])
		}
		return r, nil
	}
	if r.URL, err = x.expand(e.URL); err != nil {
		return nil, fail("url", err)
	}
	if r.Headers, err = x.expandMap(e.Headers); err != nil {
		return nil, fail("headers", err)
	}
	if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fail("url", fmt.Errorf("target %q is not an http(s) URL", origin.RedactString(r.URL)))
	}
	switch r.Kind {
	case KindHTTP:
		r.Policy = negotiate.StreamableOnly
	case KindSSE:
		r.Policy = negotiate.SSEOnly
	default:
		r.Policy = negotiate.TransportAuto
	}
	if e.OAuth != nil {
		o := *e.OAuth
		o.Scopes = slices.Clone(o.Scopes)
		if o.ClientID, err = x.expand(o.ClientID); err != nil {
			return nil, fail("oauth client id", err)
		}
		if o.secret, err = x.expand(o.secret); err != nil {
			return nil, fail("oauth client secret", err)
		}
		if o.Issuer, err = x.expand(o.Issuer); err != nil {
			return nil, fail("oauth issuer", err)
		}
		r.OAuth = &o
	}
	return r, nil
}

// Target is what client.Dial connects to: the command (with Env and Dir)
// or the URL.
func (r *Resolved) Target() client.Target {
	if r.Kind == KindStdio {
		return client.Process(stdio.Command{Path: r.Command, Args: slices.Clone(r.Args), Env: slices.Clone(r.Env), Dir: r.Dir})
	}
	return client.URL(r.URL)
}

// Options are the client options the entry implies: for an HTTP entry,
// its headers (by name) and its transport policy. OAuth needs an
// authorizer of the host's (see OAuth.ApplyTo).
func (r *Resolved) Options() []client.Option {
	if r.Kind == KindStdio {
		return nil
	}
	var opts []client.Option
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		opts = append(opts, client.WithHeader(k, r.Headers[k]))
	}
	return append(opts, client.WithTransportPolicy(r.Policy))
}

// ApplyTo sets cfg's pre-registered client (ClientID, ClientSecret,
// ClientIssuer) and Scopes from o, leaving the rest of cfg alone.
func (o OAuth) ApplyTo(cfg *auth.Config) {
	cfg.ClientID, cfg.ClientSecret, cfg.ClientIssuer = o.ClientID, o.secret, o.Issuer
	cfg.Scopes = slices.Clone(o.Scopes)
}
