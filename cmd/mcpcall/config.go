package main

import (
	"errors"
	"fmt"

	"github.com/anymcp/anymcp/mcpconfig"
)

// configSearchHelp documents where server names are looked up, in order.
const configSearchHelp = `Server names are looked up in the MCP config files people already have, in
this order (the first definition of a name wins; ./ is the current directory):
  1. $MCPCALL_CONFIG, if set                         mcpServers or servers
  2. ~/.claude.json, projects["<cwd>"].mcpServers     Claude Code, local scope
  3. ./.mcp.json                                     Claude Code, project scope
  4. ./.vscode/mcp.json                              VS Code workspace (key "servers")
  5. ./.cursor/mcp.json                              Cursor, project
  6. ./config/mcporter.json, or $MCPORTER_CONFIG     mcporter, project
  7. ~/.claude.json, mcpServers                      Claude Code, user scope
  8. ~/.cursor/mcp.json                              Cursor, global
  9. VS Code user mcp.json (~/.config/Code/User/mcp.json on Linux,
     ~/Library/Application Support/Code/User/ on macOS, %APPDATA%\Code\User\ on Windows)
 10. Claude Desktop claude_desktop_config.json (~/.config/Claude/ on Linux,
     ~/Library/Application Support/Claude/ on macOS, %APPDATA%\Claude\ on Windows)
 11. mcporter.json[c] in $XDG_CONFIG_HOME/mcporter or ~/.mcporter   mcporter, home
--config FILE searches that file only; FILE:NAME as a target names both.
mcporter's entries may say "baseUrl" for url, a command line or list for
command and args, and $env:NAME for ${NAME}; its "lifecycle" is not used
(mcpcall connects for each run).
An entry is {"command","args","env","cwd"} for stdio, or {"type","url","headers"}
with type http or streamable-http (Streamable HTTP only), sse (HTTP+SSE only),
or no type (try both); ${VAR}, ${VAR:-default} and ${env:VAR} are expanded in
command, args, env, cwd, url and headers. An HTTP entry's OAuth client is read
from "oauth": {"clientId","callbackPort","scopes"} (Claude Code) or
"auth": {"CLIENT_ID","CLIENT_SECRET","scopes"} (Cursor; expanded too); in
either, "issuer" names the authorization server the client belongs to
(as --client-issuer).`

// findServer looks name up: in file only, or along the search order when
// file is "". The error lists the names there are when none matches.
func (c *cli) findServer(file, name string) (mcpconfig.Entry, error) {
	locs := c.places.SearchOrder()
	if file != "" {
		locs = []mcpconfig.Location{c.places.File(file)}
	}
	e, err := c.places.Find(locs, name)
	var nf *mcpconfig.NotFoundError
	switch {
	case err == nil:
		return e, nil
	case !errors.As(err, &nf):
		return e, usageErr("%v", err)
	}
	msg := fmt.Sprintf("no server named %q in the config files", name)
	if len(nf.Known) == 0 {
		msg = fmt.Sprintf("%q is not a URL, and no config file defines servers (see `mcpcall servers --help`); for a command, put it after `--`", name)
	} else if near := closest(name, nf.Known, 3); len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	} else {
		msg += " (`mcpcall servers` lists them)"
	}
	return mcpconfig.Entry{}, usageErr("%s", msg)
}
