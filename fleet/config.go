package fleet

import (
	"errors"
	"strings"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/stdio"
)

// ConfigOptions tell FromConfig what only the host knows.
type ConfigOptions struct {
	// Lookup reads the variables of ${VAR}; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
	// ServerOptions, when set, returns a server's options beyond what its
	// entry says (headers, transport policy): an authorizer built from
	// r.OAuth and the host's token store, a logger, hooks. An error
	// leaves the server out, as an *mcpconfig.EntryError (field "auth").
	ServerOptions func(r *mcpconfig.Resolved) ([]client.Option, error)
	// Command, when set, may change a stdio server's command before it is
	// first started: where its stderr goes, how long it is given to exit.
	Command func(r *mcpconfig.Resolved, cmd *stdio.Command)
}

// FromConfig makes the servers of a fleet from config entries
// (mcpconfig.Places.Load): each entry's ${VAR}s expanded, its headers
// and transport policy as client options, its tool lists as Allow and
// Deny (names taken literally), a disabled entry as a StateDisabled server
// (not resolved, so a variable it needs may be unset). The first
// definition of a name is used; shadowed ones are skipped. An entry
// that cannot be used (a problem in its file, a variable not set, a
// failure of ServerOptions) is left out, and its *mcpconfig.EntryError
// is among the errors: the rest of the fleet works without it.
func FromConfig(entries []mcpconfig.Entry, o ConfigOptions) ([]Server, []error) {
	var servers []Server
	var errs []error
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Shadowed || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		s := Server{Name: e.Name, Allow: literalPatterns(e.Allow), Deny: literalPatterns(e.Deny)}
		if e.Disabled {
			s.Disabled = true
			servers = append(servers, s)
			continue
		}
		r, err := e.Resolve(o.Lookup)
		if err != nil {
			errs = append(errs, asEntryError(e, "", err))
			continue
		}
		if r.Kind == mcpconfig.KindStdio {
			cmd := stdio.Command{Path: r.Command, Args: r.Args, Env: r.Env, Dir: r.Dir}
			if o.Command != nil {
				o.Command(r, &cmd)
			}
			s.Target = client.Process(cmd)
		} else {
			s.Target = client.URL(r.URL)
		}
		s.Options = r.Options()
		if o.ServerOptions != nil {
			more, err := o.ServerOptions(r)
			if err != nil {
				errs = append(errs, asEntryError(e, "auth", err))
				continue
			}
			s.Options = append(s.Options, more...)
		}
		servers = append(servers, s)
	}
	return servers, errs
}

// asEntryError returns err as an *mcpconfig.EntryError naming e.
func asEntryError(e mcpconfig.Entry, field string, err error) error {
	if ee, ok := errors.AsType[*mcpconfig.EntryError](err); ok {
		return ee
	}
	return &mcpconfig.EntryError{Server: e.Name, File: e.Source, Field: field, Err: err}
}

// literalPatterns turns tool names into path.Match patterns that match
// only themselves: a config file's tool lists are names, and a name may
// hold *, ? or [.
func literalPatterns(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		var b strings.Builder
		for _, r := range n {
			switch r {
			case '*', '?', '[', ']', '\\':
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		out[i] = b.String()
	}
	return out
}
