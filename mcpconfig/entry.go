package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Entry is one server definition, as written in its file: nothing is
// expanded (Resolve does that). Its JSON is what `mcpcall servers --json`
// prints.
type Entry struct {
	Name     string            `json:"name"`
	Type     string            `json:"type,omitempty"` // as written: "http", "streamable-http", "sse", "stdio" or ""
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
	// Allow and Deny filter the server's tools by name (see ToolAllowed):
	// Allow from "includeTools", Deny from "excludeTools" and
	// "disabledTools". Empty means no filter.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	OAuth *OAuth   `json:"oauth,omitempty"`
	// Description and Lifecycle ("keep-alive" or "ephemeral") are
	// mcporter's, as written; mcpcall connects for each run, so it has
	// no use for Lifecycle.
	Description string `json:"description,omitempty"`
	Lifecycle   string `json:"lifecycle,omitempty"`

	Source string `json:"source"` // the file
	Label  string `json:"label"`  // whose file it is
	// Format is the form the entry is written in: FormatMCPServers,
	// FormatServers, FormatLocal or FormatMCPorter.
	Format   string `json:"format"`
	Shadowed bool   `json:"shadowed,omitempty"`
	// Problem says why the entry cannot be used ("" when it can).
	Problem string `json:"error,omitempty"`

	workspace string // ${workspaceFolder}
	home      string // ${userHome}
}

// Kind is the transport an entry asks for.
type Kind string

const (
	KindStdio Kind = "stdio" // a command
	KindHTTP  Kind = "http"  // Streamable HTTP only ("http", "streamable-http")
	KindSSE   Kind = "sse"   // HTTP+SSE only
	KindAuto  Kind = "auto"  // a url and no type: Streamable HTTP, then HTTP+SSE
)

// Kind is the entry's normalised type, or "" when its type is unknown.
func (e Entry) Kind() Kind {
	switch strings.ToLower(e.Type) {
	case "stdio":
		return KindStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return KindHTTP
	case "sse":
		return KindSSE
	case "":
		if e.Command != "" {
			return KindStdio
		}
		return KindAuto
	}
	return ""
}

// ToolAllowed reports whether the entry lets a host offer the tool named
// name: not denied, and allowed when there is an allow list.
func (e Entry) ToolAllowed(name string) bool {
	if slices.Contains(e.Deny, name) {
		return false
	}
	return len(e.Allow) == 0 || slices.Contains(e.Allow, name)
}

// OAuth is what an entry says about its OAuth client: Claude Code's
// "oauth" (clientId, callbackPort, scopes as one string) or Cursor's
// "auth" (CLIENT_ID, CLIENT_SECRET, scopes as a list). The secret is
// kept unexported and never printed: not by fmt, not in JSON.
type OAuth struct {
	ClientID     string
	Scopes       []string
	CallbackPort int // the loopback port the client is registered with
	// Issuer is the authorization server the client belongs to (an
	// anymcp field, in either form): its credentials go to no other.
	Issuer string
	secret string
}

// ClientSecret is the client's secret ("" for a public client).
func (o OAuth) ClientSecret() string { return o.secret }

// HasSecret reports whether the entry gives a client secret.
func (o OAuth) HasSecret() bool { return o.secret != "" }

// String describes the client without its secret.
func (o OAuth) String() string {
	return fmt.Sprintf("{ClientID:%s ClientSecret:%t Scopes:%v CallbackPort:%d Issuer:%s}", o.ClientID, o.secret != "", o.Scopes, o.CallbackPort, o.Issuer)
}

// GoString is String, for %#v.
func (o OAuth) GoString() string { return "mcpconfig.OAuth" + o.String() }

// MarshalJSON writes whether there is a secret, never the secret.
func (o OAuth) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ClientID     string   `json:"clientId,omitempty"`
		HasSecret    bool     `json:"clientSecret,omitempty"`
		Scopes       []string `json:"scopes,omitempty"`
		CallbackPort int      `json:"callbackPort,omitempty"`
		Issuer       string   `json:"issuer,omitempty"`
	}{o.ClientID, o.secret != "", o.Scopes, o.CallbackPort, o.Issuer})
}

// rawEntry is the JSON of one entry; unknown keys are ignored.
type rawEntry struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Command   json.RawMessage   `json:"command"` // a string; mcporter: also a list, or a command line
	Args      []string          `json:"args"`
	Env       map[string]any    `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"` // Windsurf
	HTTPURL   string            `json:"httpUrl"`   // Gemini CLI: Streamable HTTP
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
	// Tool filters. alwaysAllow and autoApprove (Cline, Roo Code) are
	// approval lists, not filters: they are not read.
	IncludeTools  []string `json:"includeTools"`  // Gemini CLI
	ExcludeTools  []string `json:"excludeTools"`  // Gemini CLI
	DisabledTools []string `json:"disabledTools"` // Roo Code, Windsurf
	OAuth         *struct {
		ClientID     string `json:"clientId"`
		CallbackPort int    `json:"callbackPort"`
		Scopes       string `json:"scopes"`
		Issuer       string `json:"issuer"`
	} `json:"oauth"` // Claude Code
	Auth json.RawMessage `json:"auth"` // Cursor: an object (cursorAuth); mcporter: "oauth"
	mcporterEntry
}

// cursorAuth is Cursor's "auth".
type cursorAuth struct {
	ClientID     string   `json:"CLIENT_ID"`
	ClientSecret string   `json:"CLIENT_SECRET"`
	Scopes       []string `json:"scopes"`
	Issuer       string   `json:"issuer"`
}

// mcporterEntry holds the keys of mcporter's form (its mcporter.json),
// in both its spellings. What is not here is not read: auth "oauth"
// (mcpcall finds out by itself), tokenCacheDir, clientName,
// oauthRedirectUrl, oauthCommand, logging, and the other newer keys.
type mcporterEntry struct {
	Description         string          `json:"description"`
	BaseURL             string          `json:"baseUrl"`
	BaseURLSnake        string          `json:"base_url"`
	ServerURLSnake      string          `json:"server_url"`
	Executable          string          `json:"executable"`
	Lifecycle           json.RawMessage `json:"lifecycle"` // "keep-alive", "ephemeral" or {mode, idleTimeoutMs}
	AllowedTools        []string        `json:"allowedTools"`
	AllowedToolsSnake   []string        `json:"allowed_tools"`
	BlockedTools        []string        `json:"blockedTools"`
	BlockedToolsSnake   []string        `json:"blocked_tools"`
	BearerToken         string          `json:"bearerToken"`
	BearerTokenSnake    string          `json:"bearer_token"`
	BearerTokenEnv      string          `json:"bearerTokenEnv"`
	BearerTokenEnvSnake string          `json:"bearer_token_env"`
	OAuthClientID       string          `json:"oauthClientId"`
	OAuthClientIDSnake  string          `json:"oauth_client_id"`
	OAuthSecret         string          `json:"oauthClientSecret"`
	OAuthSecretSnake    string          `json:"oauth_client_secret"`
	OAuthSecretEnv      string          `json:"oauthClientSecretEnv"`
	OAuthSecretEnvSnake string          `json:"oauth_client_secret_env"`
	OAuthScope          string          `json:"oauthScope"`
	OAuthScopeSnake     string          `json:"oauth_scope"`
}

// mcporterOnly reports whether r uses a key only mcporter's form has.
func (r *rawEntry) mcporterOnly() bool {
	m := &r.mcporterEntry
	return m.BaseURL != "" || m.BaseURLSnake != "" || m.ServerURLSnake != "" || m.Executable != "" ||
		m.Lifecycle != nil || m.BearerToken != "" || m.BearerTokenSnake != "" || m.BearerTokenEnv != "" ||
		m.BearerTokenEnvSnake != "" || m.AllowedTools != nil || m.AllowedToolsSnake != nil ||
		m.BlockedTools != nil || m.BlockedToolsSnake != nil || jsonKind(r.Command) == '['
}

// jsonKind is the first byte of a JSON value: '"' for a string, '[' for a
// list, '{' for an object; 0 for none.
func jsonKind(v json.RawMessage) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// decodeEntry reads one entry, written in format (mcporter's form when
// mcporter is set, or when it uses a key only that form has); what is
// wrong with it goes in Problem.
func decodeEntry(name string, raw json.RawMessage, loc Location, home, format string, mcporter bool) Entry {
	e := Entry{Name: name, Source: loc.Path, Label: loc.Label, Format: format, workspace: loc.Workspace, home: home}
	var r rawEntry
	if err := json.Unmarshal(raw, &r); err != nil {
		e.Problem = "not a server entry: " + err.Error()
		return e
	}
	if mcporter || r.mcporterOnly() {
		e.Format = FormatMCPorter
		if err := r.fromMCPorter(&e, loc, home); err != nil {
			e.Problem = err.Error()
			return e
		}
	} else if jsonKind(r.Command) != 0 {
		if err := json.Unmarshal(r.Command, &e.Command); err != nil {
			e.Problem = "command: want a string"
			return e
		}
	}
	e.Type = r.Type
	if e.Type == "" {
		e.Type = r.Transport
	}
	if e.Args == nil {
		e.Args = r.Args
	}
	e.Headers, e.Disabled = mergeHeaders(r.Headers, e.Headers), r.Disabled
	if e.Cwd == "" {
		e.Cwd = r.Cwd
	}
	if e.URL == "" {
		e.URL = r.URL
	}
	if e.URL == "" {
		e.URL = r.ServerURL
	}
	if e.URL == "" && r.HTTPURL != "" {
		e.URL = r.HTTPURL
		if e.Type == "" {
			e.Type = "http" // what Gemini CLI means by httpUrl
		}
	}
	e.Allow = names(r.IncludeTools, e.Allow)
	e.Deny = names(r.ExcludeTools, r.DisabledTools, e.Deny)
	switch {
	case r.OAuth != nil:
		e.OAuth = &OAuth{ClientID: r.OAuth.ClientID, CallbackPort: r.OAuth.CallbackPort, Scopes: strings.Fields(r.OAuth.Scopes), Issuer: r.OAuth.Issuer}
	case jsonKind(r.Auth) == '{':
		var a cursorAuth
		if err := json.Unmarshal(r.Auth, &a); err != nil {
			e.Problem = "auth: " + err.Error()
			return e
		}
		e.OAuth = &OAuth{ClientID: a.ClientID, secret: a.ClientSecret, Scopes: a.Scopes, Issuer: a.Issuer}
	}
	if len(r.Env) > 0 {
		e.Env = make(map[string]string, len(r.Env))
		for k, v := range r.Env {
			switch v := v.(type) {
			case string:
				e.Env[k] = v
			case nil:
				e.Env[k] = ""
			default:
				b, _ := json.Marshal(v)
				e.Env[k] = string(b)
			}
			if e.Format == FormatMCPorter {
				e.Env[k] = mcporterVar(e.Env[k])
			}
		}
	}
	if e.Format == FormatMCPorter {
		for k, v := range e.Headers {
			e.Headers[k] = mcporterVar(v)
		}
		for i, a := range e.Args {
			e.Args[i] = mcporterVar(a)
		}
		e.Command, e.URL = mcporterVar(e.Command), mcporterVar(e.URL)
	}
	switch e.Kind() {
	case KindStdio:
		if e.Command == "" {
			e.Problem = "a stdio entry needs a command"
		}
	case KindAuto:
		if e.URL == "" {
			e.Problem = "an entry needs a command (stdio) or a url (HTTP)"
			if e.Format == FormatMCPorter {
				e.Problem = "an entry needs a command (stdio) or a baseUrl (HTTP)"
			}
		}
	case KindHTTP, KindSSE:
		if e.URL == "" {
			e.Problem = "an HTTP entry needs a url"
		}
	default:
		e.Problem = fmt.Sprintf("unknown type %q (want stdio, http, streamable-http or sse)", e.Type)
	}
	return e
}

// fromMCPorter fills e from the keys of mcporter's form: the url
// (baseUrl, base_url, url, serverUrl, server_url, in mcporter's order),
// the command (a list, a command line split as mcporter splits it, or
// executable), cwd (the file's folder by default, a relative one from
// there), the bearer token, the OAuth client, the tool filters, and
// lifecycle and description as written.
func (r *rawEntry) fromMCPorter(e *Entry, loc Location, home string) error {
	m := &r.mcporterEntry
	e.Description = m.Description
	e.URL = first(m.BaseURL, m.BaseURLSnake, r.URL, r.ServerURL, m.ServerURLSnake)
	switch jsonKind(r.Command) {
	case '[':
		var list []string
		if err := json.Unmarshal(r.Command, &list); err != nil || len(list) == 0 {
			return fmt.Errorf("command: want a string or a non-empty list of strings")
		}
		e.Command, e.Args = list[0], list[1:]
	case '"':
		if err := json.Unmarshal(r.Command, &e.Command); err != nil {
			return fmt.Errorf("command: %v", err)
		}
		if len(r.Args) == 0 && strings.ContainsAny(e.Command, " \t\"'\\") {
			words := splitCommandLine(e.Command)
			if len(words) == 0 {
				return fmt.Errorf("command: empty")
			}
			e.Command, e.Args = words[0], words[1:]
		}
	case 0:
		e.Command = m.Executable
	default:
		return fmt.Errorf("command: want a string or a list of strings")
	}
	if e.URL == "" && e.Command != "" {
		dir := filepath.Dir(loc.Path)
		cwd := r.Cwd
		if cwd == "~" || strings.HasPrefix(cwd, "~/") {
			cwd = filepath.Join(home, strings.TrimPrefix(cwd[1:], "/"))
		}
		switch {
		case cwd == "":
			e.Cwd = dir
		case filepath.IsAbs(cwd) || strings.HasPrefix(cwd, "$"):
			e.Cwd = cwd
		default:
			e.Cwd = filepath.Join(dir, cwd)
		}
	}
	if tok := first(m.BearerToken, m.BearerTokenSnake); tok != "" {
		e.Headers = map[string]string{"Authorization": "Bearer " + tok}
	}
	if v := first(m.BearerTokenEnv, m.BearerTokenEnvSnake); v != "" {
		e.Headers = map[string]string{"Authorization": "Bearer ${" + v + "}"}
	}
	id, scope := first(m.OAuthClientID, m.OAuthClientIDSnake), first(m.OAuthScope, m.OAuthScopeSnake)
	secret := first(m.OAuthSecret, m.OAuthSecretSnake)
	if v := first(m.OAuthSecretEnv, m.OAuthSecretEnvSnake); v != "" {
		secret = "${" + v + "}"
	}
	if id != "" || scope != "" || secret != "" {
		e.OAuth = &OAuth{ClientID: id, secret: secret, Scopes: strings.Fields(scope)}
	}
	e.Allow = names(m.AllowedTools, m.AllowedToolsSnake)
	e.Deny = names(m.BlockedTools, m.BlockedToolsSnake)
	switch jsonKind(m.Lifecycle) {
	case '"':
		_ = json.Unmarshal(m.Lifecycle, &e.Lifecycle)
	case '{':
		var l struct{ Mode string }
		_ = json.Unmarshal(m.Lifecycle, &l)
		e.Lifecycle = l.Mode
	}
	return nil
}

// mergeHeaders returns written with the headers from fields added; an
// Authorization among fields (from bearerToken) replaces one written.
func mergeHeaders(written, fields map[string]string) map[string]string {
	if len(fields) == 0 {
		return written
	}
	out := make(map[string]string, len(written)+len(fields))
	for k, v := range written {
		if _, replaced := fields["Authorization"]; !replaced || !strings.EqualFold(k, "authorization") {
			out[k] = v
		}
	}
	maps.Copy(out, fields)
	return out
}

// mcporterVar turns mcporter's "$env:NAME", a whole value taken from the
// variable NAME, into ${NAME}.
func mcporterVar(v string) string {
	if name, ok := strings.CutPrefix(v, "$env:"); ok && name != "" && !strings.ContainsAny(name, "${} \t") {
		return "${" + name + "}"
	}
	return v
}

// splitCommandLine splits a command line into words as mcporter does:
// at spaces, with '…' and "…" quoting and \ escaping the next character.
func splitCommandLine(s string) []string {
	var words []string
	var cur strings.Builder
	single, double, escaped := false, false, false
	for _, c := range strings.TrimSpace(s) {
		switch {
		case escaped:
			cur.WriteRune(c)
			escaped = false
		case c == '\\':
			escaped = true
		case c == '\'' && !double:
			single = !single
		case c == '"' && !single:
			double = !double
		case c == ' ' && !single && !double:
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(c)
		}
	}
	if escaped {
		cur.WriteByte('\\')
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// first is the first of values that is not empty.
func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// names joins lists of tool names, each name once; nil when they are all
// empty.
func names(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
