// Package mcpconfig reads the MCP server definitions people already have:
// the "mcpServers" (or VS Code's "servers") files of Claude Code, Claude
// Desktop, VS Code, Cursor and mcporter, and $MCPCALL_CONFIG. mcpcall
// reads them through it, and so can a host.
//
// Places.SearchOrder lists the files in this order; the first definition
// of a name wins and later ones are marked Shadowed:
//
//  1. $MCPCALL_CONFIG (mcpServers or servers)
//  2. ~/.claude.json, projects["<cwd>"].mcpServers (Claude Code, local scope)
//  3. ./.mcp.json (Claude Code, project)
//  4. ./.vscode/mcp.json (VS Code workspace, key "servers")
//  5. ./.cursor/mcp.json (Cursor, project)
//  6. ./config/mcporter.json (mcporter, project), or $MCPORTER_CONFIG
//  7. ~/.claude.json, mcpServers (Claude Code, user)
//  8. ~/.cursor/mcp.json (Cursor, global)
//  9. VS Code's user mcp.json, under Places.AppConfigDir
//  10. Claude Desktop's claude_desktop_config.json, under Places.AppConfigDir
//  11. mcporter's home file: mcporter.json[c] in $XDG_CONFIG_HOME/mcporter or ~/.mcporter
//
// Entry.Format says which form an entry is in. mcporter's form (its files,
// or a file with its "imports", or an entry with baseUrl) takes baseUrl as
// the url, a command line or list as command and args, $env:NAME as
// ${NAME}, bearerToken(Env), its OAuth client and tool lists; "lifecycle"
// is kept as written, unused by mcpcall, which connects for each run.
//
// Places.File is one file the user names instead. Comments and trailing
// commas (JSONC) are allowed; a url may be written "url", "serverUrl"
// (Windsurf) or "httpUrl" (Gemini CLI, Streamable HTTP). Places.Load returns every Entry, and one
// *FileError per file that cannot be read, without stopping; Places.Find
// returns one by name.
//
// An Entry is kept as written. Entry.Resolve expands ${VAR},
// ${VAR:-default}, ${env:VAR}, ${workspaceFolder} and ${userHome} in the
// command, args, env, cwd, url, headers and OAuth client, and gives a
// Resolved: its Target and Options for client.Dial. The type decides the
// transport policy: "http" or "streamable-http" is Streamable HTTP only,
// "sse" HTTP+SSE only, no type with a url tries both. An unset variable
// is an *UnsetVariableError inside an *EntryError that names the server,
// the file and the field.
//
// OAuth comes from Claude Code's "oauth" {clientId, callbackPort, scopes}
// or Cursor's "auth" {CLIENT_ID, CLIENT_SECRET, scopes}, with "issuer" in
// either; the secret is never printed.
//
// Which servers and tools a host offers: "disabled": true sets Disabled;
// Gemini CLI's "includeTools" is Entry.Allow, its "excludeTools" and
// Roo Code's and Windsurf's "disabledTools" are Entry.Deny; see
// Entry.ToolAllowed. "alwaysAllow" and "autoApprove" (Cline, Roo Code)
// are not read: they say which tools run without asking the user, not
// which tools exist, and read as an allow list they would hide the rest.
package mcpconfig
