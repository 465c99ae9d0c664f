package mcpconfig

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Which part of a config document holds servers.
const (
	keyLocal      = "local"      // projects["<cwd>"].mcpServers (~/.claude.json)
	keyMCPServers = "mcpServers" // Claude Desktop, Claude Code, Cursor, Gemini CLI, Cline, Roo Code
	keyServers    = "servers"    // VS Code
)

// The forms an entry is written in (Entry.Format).
const (
	FormatMCPServers = "mcpServers"          // Claude Code and Desktop, Cursor, Gemini CLI, Cline, Roo Code, Windsurf
	FormatServers    = "servers"             // VS Code
	FormatLocal      = "projects.mcpServers" // ~/.claude.json's local scope
	FormatMCPorter   = "mcporter"            // mcporter's mcpServers: baseUrl, lifecycle, command lines
)

// allKeys is what a file named by hand is searched for.
var allKeys = []string{keyLocal, keyMCPServers, keyServers}

// Places is where the config files are for one run: the home and working
// directories, the operating system (which decides where desktop
// applications keep their settings) and the environment. DefaultPlaces
// reads the real ones; tests and hosts may set their own.
type Places struct {
	Home string
	Cwd  string // the project: ./.mcp.json, and the key of ~/.claude.json's projects
	GOOS string
	// Getenv reads $MCPCALL_CONFIG, $MCPORTER_CONFIG, $APPDATA and
	// $XDG_CONFIG_HOME; nil means os.Getenv.
	Getenv func(string) string
}

// DefaultPlaces is this process's home, working directory, OS and
// environment.
func DefaultPlaces() Places {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	return Places{Home: home, Cwd: cwd, GOOS: runtime.GOOS, Getenv: os.Getenv}
}

func (p Places) getenv(k string) string {
	if p.Getenv == nil {
		return os.Getenv(k)
	}
	return p.Getenv(k)
}

// Location is one config file to read.
type Location struct {
	Path  string
	Label string // whose file it is, e.g. "Cursor (global)"
	// Workspace is what ${workspaceFolder} stands for in its entries.
	Workspace string
	// Required makes a missing file an error: a file the user named.
	// Otherwise a file that does not exist is skipped.
	Required bool
	keys     []string // the parts of the document read, in order; nil: all
	mcporter bool     // mcporter's file: its entries are in its form
}

// SearchOrder lists the config files in the documented order (see the
// package doc): the first definition of a name wins.
func (p Places) SearchOrder() []Location {
	home, cwd := p.Home, p.Cwd
	var locs []Location
	if f := p.getenv("MCPCALL_CONFIG"); f != "" {
		locs = append(locs, Location{Path: f, Label: "$MCPCALL_CONFIG", keys: []string{keyMCPServers, keyServers}, Workspace: filepath.Dir(f)})
	}
	claudeJSON := filepath.Join(home, ".claude.json")
	app := p.AppConfigDir()
	locs = append(locs,
		Location{Path: claudeJSON, Label: "Claude Code (local scope)", keys: []string{keyLocal}, Workspace: cwd},
		Location{Path: filepath.Join(cwd, ".mcp.json"), Label: "Claude Code (project)", keys: []string{keyMCPServers}, Workspace: cwd},
		Location{Path: filepath.Join(cwd, ".vscode", "mcp.json"), Label: "VS Code (workspace)", keys: []string{keyServers}, Workspace: cwd},
		Location{Path: filepath.Join(cwd, ".cursor", "mcp.json"), Label: "Cursor (project)", keys: []string{keyMCPServers}, Workspace: cwd},
		Location{Path: claudeJSON, Label: "Claude Code (user)", keys: []string{keyMCPServers}, Workspace: home},
		Location{Path: filepath.Join(home, ".cursor", "mcp.json"), Label: "Cursor (global)", keys: []string{keyMCPServers}, Workspace: home},
		Location{Path: filepath.Join(app, "Code", "User", "mcp.json"), Label: "VS Code (user)", keys: []string{keyServers}, Workspace: home},
		Location{Path: filepath.Join(app, "Claude", "claude_desktop_config.json"), Label: "Claude Desktop", keys: []string{keyMCPServers}, Workspace: home},
	)
	// mcporter's project file comes after the other project files, its
	// home file last; $MCPORTER_CONFIG stands for both, as for mcporter.
	mcporter := func(path, label string) Location {
		return Location{Path: path, Label: label, keys: []string{keyMCPServers}, Workspace: filepath.Dir(path), mcporter: true}
	}
	project := mcporter(filepath.Join(cwd, "config", "mcporter.json"), "mcporter (project)")
	user := mcporter(p.mcporterHome(), "mcporter (home)")
	if f := p.getenv("MCPORTER_CONFIG"); f != "" {
		project, user = mcporter(p.expandHome(f), "$MCPORTER_CONFIG"), Location{}
	}
	locs = slices.Insert(locs, slices.IndexFunc(locs, func(l Location) bool { return l.Label == "Claude Code (user)" }), project)
	if user.Path != "" {
		locs = append(locs, user)
	}
	return locs
}

// mcporterHome is mcporter's home config file: the first that exists of
// mcporter.json and mcporter.jsonc in $XDG_CONFIG_HOME/mcporter (when
// that is an absolute path), then in ~/.mcporter; the first when none
// does.
func (p Places) mcporterHome() string {
	var dirs []string
	if x := p.expandHome(p.getenv("XDG_CONFIG_HOME")); filepath.IsAbs(x) {
		dirs = append(dirs, filepath.Join(x, "mcporter"))
	}
	dirs = append(dirs, filepath.Join(p.Home, ".mcporter"))
	var first string
	for _, d := range dirs {
		for _, name := range []string{"mcporter.json", "mcporter.jsonc"} {
			f := filepath.Join(d, name)
			if first == "" {
				first = f
			}
			if _, err := os.Stat(f); err == nil {
				return f
			}
		}
	}
	return first
}

// expandHome replaces a leading "~" of path with the home directory.
func (p Places) expandHome(path string) string {
	if path == "~" {
		return p.Home
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		return filepath.Join(p.Home, rest)
	}
	return path
}

// File is one file named by the user (mcpcall's --config): every part of
// it is read (mcpServers, servers, and the local scope of a
// ~/.claude.json), and it must exist.
func (p Places) File(path string) Location {
	return Location{Path: path, Label: "--config", Workspace: filepath.Dir(path), Required: true}
}

// AppConfigDir is where desktop applications keep their settings on
// p.GOOS: ~/Library/Application Support on macOS, %APPDATA% on Windows,
// $XDG_CONFIG_HOME or ~/.config elsewhere.
func (p Places) AppConfigDir() string {
	switch p.GOOS {
	case "darwin":
		return filepath.Join(p.Home, "Library", "Application Support")
	case "windows":
		if d := p.getenv("APPDATA"); d != "" {
			return d
		}
		return filepath.Join(p.Home, "AppData", "Roaming")
	}
	if d := p.getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(p.Home, ".config")
}
