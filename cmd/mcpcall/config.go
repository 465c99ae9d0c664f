package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// configSearchHelp documents where server names are looked up, in order.
const configSearchHelp = `Server names are looked up in the MCP config files people already have, in
this order (the first definition of a name wins; ./ is the current directory):
  1. $MCPCALL_CONFIG, if set                         mcpServers or servers
  2. ~/.claude.json, projects["<cwd>"].mcpServers     Claude Code, local scope
  3. ./.mcp.json                                     Claude Code, project scope
  4. ./.vscode/mcp.json                              VS Code workspace (key "servers")
  5. ./.cursor/mcp.json                              Cursor, project
  6. ~/.claude.json, mcpServers                      Claude Code, user scope
  7. ~/.cursor/mcp.json                              Cursor, global
  8. VS Code user mcp.json (~/.config/Code/User/mcp.json on Linux,
     ~/Library/Application Support/Code/User/ on macOS, %APPDATA%\Code\User\ on Windows)
  9. Claude Desktop claude_desktop_config.json (~/.config/Claude/ on Linux,
     ~/Library/Application Support/Claude/ on macOS, %APPDATA%\Claude\ on Windows)
--config FILE searches that file only; FILE:NAME as a target names both.
An entry is {"command","args","env","cwd"} for stdio, or {"type","url","headers"}
with type http or streamable-http (Streamable HTTP only), sse (HTTP+SSE only),
or no type (try both); ${VAR}, ${VAR:-default} and ${env:VAR} are expanded in
command, args, env, cwd, url and headers. An HTTP entry's OAuth client is read
from "oauth": {"clientId","callbackPort","scopes"} (Claude Code) or
"auth": {"CLIENT_ID","CLIENT_SECRET","scopes"} (Cursor; expanded too); in
either, "issuer" names the authorization server the client belongs to
(as --client-issuer).`

// Which part of a config document a location reads.
const (
	partLocal      = "local"      // projects["<cwd>"].mcpServers (~/.claude.json)
	partMCPServers = "mcpServers" // Claude Desktop, Claude Code, Cursor
	partServers    = "servers"    // VS Code
)

// location is one config file in the search order.
type location struct {
	path      string
	label     string   // what program the file belongs to
	parts     []string // which keys of the document hold servers, in order
	workspace string   // ${workspaceFolder}
}

// serverEntry is one server definition, as written in its file.
type serverEntry struct {
	Name     string            `json:"name"`
	Type     string            `json:"type,omitempty"`
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
	OAuth    *oauthEntry       `json:"oauth,omitempty"`

	Source    string `json:"source"` // the file
	Label     string `json:"label"`  // whose file it is
	Shadowed  bool   `json:"shadowed,omitempty"`
	Problem   string `json:"error,omitempty"` // why the entry cannot be used
	workspace string
}

// oauthEntry is what an entry says about OAuth: Claude Code's "oauth"
// (clientId, callbackPort, scopes as one string) or Cursor's "auth"
// (CLIENT_ID, CLIENT_SECRET, scopes as a list). The secret is never
// printed.
type oauthEntry struct {
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret string   `json:"-"`
	HasSecret    bool     `json:"clientSecret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	CallbackPort int      `json:"callbackPort,omitempty"`
	// Issuer is the authorization server the client belongs to (an
	// anymcp field, in either form): its credentials go to no other.
	Issuer string `json:"issuer,omitempty"`
}

// rawEntry is the JSON of one entry; unknown keys are ignored.
type rawEntry struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]any    `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"`
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
	OAuth     *struct {
		ClientID     string `json:"clientId"`
		CallbackPort int    `json:"callbackPort"`
		Scopes       string `json:"scopes"`
		Issuer       string `json:"issuer"`
	} `json:"oauth"` // Claude Code
	Auth *struct {
		ClientID     string   `json:"CLIENT_ID"`
		ClientSecret string   `json:"CLIENT_SECRET"`
		Scopes       []string `json:"scopes"`
		Issuer       string   `json:"issuer"`
	} `json:"auth"` // Cursor
}

// configPlaces is where the config files are for one run.
type configPlaces struct {
	home   string
	cwd    string
	goos   string
	getenv func(string) string
}

// searchOrder lists the config files to read, in the documented order.
func (p configPlaces) searchOrder() []location {
	home, cwd := p.home, p.cwd
	var locs []location
	if f := p.getenv("MCPCALL_CONFIG"); f != "" {
		locs = append(locs, location{path: f, label: "$MCPCALL_CONFIG", parts: []string{partMCPServers, partServers}, workspace: filepath.Dir(f)})
	}
	claudeJSON := filepath.Join(home, ".claude.json")
	locs = append(locs,
		location{path: claudeJSON, label: "Claude Code (local scope)", parts: []string{partLocal}, workspace: cwd},
		location{path: filepath.Join(cwd, ".mcp.json"), label: "Claude Code (project)", parts: []string{partMCPServers}, workspace: cwd},
		location{path: filepath.Join(cwd, ".vscode", "mcp.json"), label: "VS Code (workspace)", parts: []string{partServers}, workspace: cwd},
		location{path: filepath.Join(cwd, ".cursor", "mcp.json"), label: "Cursor (project)", parts: []string{partMCPServers}, workspace: cwd},
		location{path: claudeJSON, label: "Claude Code (user)", parts: []string{partMCPServers}, workspace: home},
		location{path: filepath.Join(home, ".cursor", "mcp.json"), label: "Cursor (global)", parts: []string{partMCPServers}, workspace: home},
		location{path: filepath.Join(p.appConfigDir(), "Code", "User", "mcp.json"), label: "VS Code (user)", parts: []string{partServers}, workspace: home},
		location{path: filepath.Join(p.appConfigDir(), "Claude", "claude_desktop_config.json"), label: "Claude Desktop", parts: []string{partMCPServers}, workspace: home},
	)
	return locs
}

// appConfigDir is where desktop applications keep their settings.
func (p configPlaces) appConfigDir() string {
	switch p.goos {
	case "darwin":
		return filepath.Join(p.home, "Library", "Application Support")
	case "windows":
		if d := p.getenv("APPDATA"); d != "" {
			return d
		}
		return filepath.Join(p.home, "AppData", "Roaming")
	}
	if d := p.getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(p.home, ".config")
}

// explicitLocation is a file named by --config or FILE:NAME: every part
// of it is read.
func (p configPlaces) explicitLocation(path string) location {
	return location{path: path, label: "--config", parts: []string{partLocal, partMCPServers, partServers}, workspace: filepath.Dir(path)}
}

// loadEntries reads every location in order. Files that do not exist are
// skipped; a file that cannot be parsed is an error only when strict (a
// file the user named). A name defined again later is marked Shadowed.
func (p configPlaces) loadEntries(locs []location, strict bool) ([]serverEntry, []error) {
	var all []serverEntry
	var problems []error
	seen := map[string]bool{}
	for _, loc := range locs {
		entries, err := p.readLocation(loc)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !strict {
				continue
			}
			problems = append(problems, err)
			continue
		}
		for _, e := range entries {
			e.Shadowed = seen[e.Name]
			seen[e.Name] = true
			all = append(all, e)
		}
	}
	return all, problems
}

// readLocation parses one file and returns the entries of its parts, each
// part's names sorted.
func (p configPlaces) readLocation(loc location) ([]serverEntry, error) {
	data, err := os.ReadFile(loc.path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(stripJSONC(data), &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", loc.path, err)
	}
	var out []serverEntry
	for _, part := range loc.parts {
		var m map[string]json.RawMessage
		switch part {
		case partLocal:
			m = doc.Projects[p.cwd].MCPServers
		case partMCPServers:
			m = doc.MCPServers
		case partServers:
			m = doc.Servers
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			out = append(out, decodeEntry(name, m[name], loc))
		}
	}
	return out, nil
}

// decodeEntry reads one entry; what is wrong with it goes in Problem.
func decodeEntry(name string, raw json.RawMessage, loc location) serverEntry {
	e := serverEntry{Name: name, Source: loc.path, Label: loc.label, workspace: loc.workspace}
	var r rawEntry
	if err := json.Unmarshal(raw, &r); err != nil {
		e.Problem = "not a server entry: " + err.Error()
		return e
	}
	e.Type = r.Type
	if e.Type == "" {
		e.Type = r.Transport
	}
	e.Command, e.Args, e.Cwd, e.Headers, e.Disabled = r.Command, r.Args, r.Cwd, r.Headers, r.Disabled
	e.URL = r.URL
	if e.URL == "" {
		e.URL = r.ServerURL
	}
	switch {
	case r.OAuth != nil:
		e.OAuth = &oauthEntry{ClientID: r.OAuth.ClientID, CallbackPort: r.OAuth.CallbackPort, Scopes: strings.Fields(r.OAuth.Scopes), Issuer: r.OAuth.Issuer}
	case r.Auth != nil:
		e.OAuth = &oauthEntry{ClientID: r.Auth.ClientID, ClientSecret: r.Auth.ClientSecret, HasSecret: r.Auth.ClientSecret != "", Scopes: r.Auth.Scopes, Issuer: r.Auth.Issuer}
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
		}
	}
	switch e.kind() {
	case "stdio":
		if e.Command == "" {
			e.Problem = "a stdio entry needs a command"
		}
	case "auto":
		if e.URL == "" {
			e.Problem = "an entry needs a command (stdio) or a url (HTTP)"
		}
	case "http", "sse":
		if e.URL == "" {
			e.Problem = "an HTTP entry needs a url"
		}
	default:
		e.Problem = fmt.Sprintf("unknown type %q (want stdio, http, streamable-http or sse)", e.Type)
	}
	return e
}

// kind is the normalised type: stdio, http (Streamable HTTP only), sse
// (HTTP+SSE only), auto (a url and no type), or "" when unknown.
func (e *serverEntry) kind() string {
	switch strings.ToLower(e.Type) {
	case "stdio":
		return "stdio"
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return "http"
	case "sse":
		return "sse"
	case "":
		if e.Command != "" {
			return "stdio"
		}
		return "auto"
	}
	return ""
}

// stripJSONC removes // and /* */ comments and trailing commas, which VS
// Code's and Cursor's files may hold, leaving strings alone.
func stripJSONC(data []byte) []byte {
	if !bytes.Contains(data, []byte("//")) && !bytes.Contains(data, []byte("/*")) && !bytes.Contains(data, []byte(",")) {
		return data
	}
	out := make([]byte, 0, len(data))
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
		case c == ']' || c == '}':
			// drop a trailing comma before the closing bracket
			j := len(out) - 1
			for j >= 0 && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// findServer looks name up in locs and returns the first usable
// definition; the error lists the names there are when none matches.
func (p configPlaces) findServer(locs []location, name string, strict bool) (serverEntry, error) {
	entries, problems := p.loadEntries(locs, strict)
	var names []string
	for _, e := range entries {
		if e.Name == name && !e.Shadowed {
			if e.Problem != "" {
				return e, usageErr("server %q in %s: %s", name, e.Source, e.Problem)
			}
			return e, nil
		}
		if !e.Shadowed {
			names = append(names, e.Name)
		}
	}
	if len(problems) > 0 && strict {
		return serverEntry{}, usageErr("%v", errors.Join(problems...))
	}
	msg := fmt.Sprintf("no server named %q in the config files", name)
	if len(entries) == 0 {
		msg = fmt.Sprintf("%q is not a URL, and no config file defines servers (see `mcpcall servers --help`); for a command, put it after `--`", name)
	} else if near := closest(name, names, 3); len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	} else {
		msg += " (`mcpcall servers` lists them)"
	}
	return serverEntry{}, usageErr("%s", msg)
}

// defaultPlaces reads the real home, working directory and OS.
func defaultPlaces(getenv func(string) string) configPlaces {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	return configPlaces{home: home, cwd: cwd, goos: runtime.GOOS, getenv: getenv}
}
