package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/anymcp/anymcp/client"
)

// Flags belong to the commands that use them. They come in sets, each
// added by one helper to the commands that take it:
//
//	output       --json, -v: every command (persistent on the root)
//	target       --config, --server: commands that name one server
//	connection   the target's, plus transport, headers, stdio, era, limits, --trace, --log-level
//	OAuth        --client-id, --grant, --scope, ...: commands that may get or send tokens
//	answer       --root, --elicit, --sampling-cmd, --sampling-llm: commands whose server may ask mcpcall
//
// A flag a command lacks keeps its default (setDefaults), so code reading
// c.f works the same for every command.

// The flag sets, by name.
var (
	// oneServerConnFlags set how to reach one server; with --all each
	// server's come from its config entry.
	oneServerConnFlags = []string{"server", "transport", "header", "bearer-env", "env", "cwd", "inherit-env"}
	// limitFlags bound the run's waits.
	limitFlags = []string{"connect-timeout", "timeout", "max-time"}
	// protocolFlags choose the era and the revision.
	protocolFlags = []string{"era", "protocol-version"}
	// oauthFlags say how OAuth tokens are obtained.
	oauthFlags = []string{"client-id", "client-secret-env", "client-issuer", "client-metadata-url", "grant", "assertion-file", "scope"}
	// answerFlagNames say how mcpcall answers the server's requests.
	answerFlagNames = []string{"root", "elicit", "sampling-cmd", "sampling-llm", "sampling-model"}
)

// setDefaults gives every flag its default, whether or not the command
// registers it.
func (f *flags) setDefaults() {
	f.logLevel = "warning"
	f.era = "auto"
	f.connectTimeout = 30 * time.Second
	f.timeout = client.DefaultTimeout
}

// addOutputFlags adds --json and -v: every command takes them.
func (c *cli) addOutputFlags(pf *pflag.FlagSet) {
	f := &c.f
	pf.BoolVar(&f.json, "json", f.json, "print exactly one JSON document on stdout; errors, logs and progress as JSON lines on stderr")
	pf.BoolVarP(&f.verbose, "verbose", "v", f.verbose, "print the negotiation report, connection details and retries on stderr")
}

// addTargetFlags adds --config and --server: for commands that name one
// server of the config files.
func (c *cli) addTargetFlags(cmd *cobra.Command) { c.addFlags(cmd, "config", "server") }

// addConnFlags adds the flags of a connection to one target: the
// target's, transport, headers, stdio, era, limits, --trace, --log-level.
func (c *cli) addConnFlags(cmd *cobra.Command) {
	c.addFlags(cmd, "config", "session")
	c.addFlags(cmd, oneServerConnFlags...)
	c.addFlags(cmd, protocolFlags...)
	c.addFlags(cmd, limitFlags...)
	c.addFlags(cmd, "trace", "log-level")
}

// addFleetConnFlags adds the flags every connection of --all shares: the
// config file, era, limits, --log-level (the rest come from each entry).
func (c *cli) addFleetConnFlags(cmd *cobra.Command) {
	c.addFlags(cmd, "config")
	c.addFlags(cmd, protocolFlags...)
	c.addFlags(cmd, limitFlags...)
	c.addFlags(cmd, "log-level")
}

// addOAuthFlags adds the flags that say how OAuth tokens are obtained.
func (c *cli) addOAuthFlags(cmd *cobra.Command) { c.addFlags(cmd, oauthFlags...) }

// addAnswerFlags adds the flags that say how mcpcall answers the
// server's requests (answers.go).
func (c *cli) addAnswerFlags(cmd *cobra.Command) { c.addFlags(cmd, answerFlagNames...) }

// onTarget gives commands that connect to one target the connection,
// OAuth and answer flags.
func (c *cli) onTarget(cmds ...*cobra.Command) {
	for _, cmd := range cmds {
		c.addConnFlags(cmd)
		c.addOAuthFlags(cmd)
		c.addAnswerFlags(cmd)
	}
}

// addFlags adds the named flags to cmd's own flags, with their shell
// completions.
func (c *cli) addFlags(cmd *cobra.Command, names ...string) {
	fs, defs := cmd.Flags(), c.flagDefs()
	for _, name := range names {
		if fs.Lookup(name) != nil {
			continue
		}
		def, ok := defs[name]
		if !ok {
			panic("mcpcall: no flag --" + name) // a slip in this file
		}
		def.add(fs)
		if def.complete != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, def.complete)
		}
	}
}

type flagDef struct {
	add      func(*pflag.FlagSet)
	complete cobra.CompletionFunc
}

// flagDefs are the flags of the sets, by name. Each default is the value
// setDefaults gave.
func (c *cli) flagDefs() map[string]flagDef {
	f, a := &c.f, &c.answers
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	noFile := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return map[string]flagDef{
		"log-level": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.logLevel, "log-level", f.logLevel, "least severe log of the server's shown on stderr ("+strings.Join(logLevels, ", ")+"); when given, also asks the server (logging/setLevel); mcpcall's own debug lines come with -v")
		}, fixed(logLevels...)},
		"trace": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.trace, "trace", f.trace, "write every JSON-RPC message and HTTP exchange as NDJSON to `FILE` (- for stderr), credentials redacted")
		}, nil},
		"config": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.config, "config", f.config, "read server names from this config `FILE` only")
		}, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"json"}, cobra.ShellCompDirectiveFilterFileExt
		}},
		"server": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.server, "server", f.server, "the target is the server `NAME` from the config files")
		}, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.serverNames(toComplete), cobra.ShellCompDirectiveNoFileComp
		}},
		"transport": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.transport, "transport", f.transport, "auto (default: Streamable HTTP, HTTP+SSE for older servers), http (Streamable HTTP only), sse (HTTP+SSE only), or stdio (needs a command)")
		}, fixed("auto", "http", "sse", "stdio")},
		"session": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.session, "session", f.session, "the target is the running session `NAME` (mcpcall session start; @NAME at the end of the line says the same)")
		}, c.completeSessions},
		"header": {func(fs *pflag.FlagSet) {
			fs.StringArrayVarP(&f.headers, "header", "H", nil, "add an HTTP header, \"Name: value\" (repeatable)")
		}, nil},
		"era": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.era, "era", f.era, "protocol era: auto (the stateless request first, then initialize), stateless (2026-07-28 on) or initialize (the revisions that open with initialize; \"modern\" and \"legacy\" are accepted as aliases)")
		}, nil},
		"protocol-version": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.protocol, "protocol-version", f.protocol, "speak only this protocol `REVISION` (e.g. 2026-07-28, 2025-06-18)")
		}, nil},
		"bearer-env": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.bearerEnv, "bearer-env", f.bearerEnv, "send Authorization: Bearer with the token in environment variable `VAR` (never printed)")
		}, noFile},
		"client-id": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.clientID, "client-id", f.clientID, "OAuth: the client `ID` registered beforehand with the server's authorization server")
		}, nil},
		"client-secret-env": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.clientSecretEnv, "client-secret-env", f.clientSecretEnv, "OAuth: the secret of --client-id is in environment variable `VAR` (never printed)")
		}, nil},
		"client-issuer": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.clientIssuer, "client-issuer", f.clientIssuer, "OAuth: the authorization server (issuer `URL`) that --client-id was registered with: its credentials go to no other (default with a secret: the first that issued a token for it)")
		}, nil},
		"client-metadata-url": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.clientMetadataURL, "client-metadata-url", f.clientMetadataURL, "OAuth: this client's Client ID Metadata Document `URL`, its client id where servers support them")
		}, nil},
		"grant": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.grant, "grant", f.grant, "OAuth: how tokens are obtained: authorization_code (a person, with auth login; the default), client_credentials (--client-id and --client-secret-env), or jwt-bearer (--client-id and --assertion-file); the last two need nobody")
		}, nil},
		"assertion-file": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.assertionFile, "assertion-file", f.assertionFile, "OAuth: the jwt-bearer grant's assertion, e.g. a workload identity token, is in `FILE`, read at every grant (never printed); implies --grant jwt-bearer")
		}, nil},
		"scope": {func(fs *pflag.FlagSet) {
			fs.StringArrayVar(&f.scopes, "scope", nil, "OAuth: ask for `SCOPE` too (repeatable, or several space-separated)")
		}, nil},
		"env": {func(fs *pflag.FlagSet) {
			fs.StringArrayVarP(&f.env, "env", "e", nil, "stdio: add KEY=VALUE to the server's environment (repeatable)")
		}, nil},
		"cwd": {func(fs *pflag.FlagSet) {
			fs.StringVar(&f.cwd, "cwd", f.cwd, "stdio: the server's working `DIR`")
		}, nil},
		"inherit-env": {func(fs *pflag.FlagSet) {
			fs.BoolVar(&f.inherit, "inherit-env", f.inherit, "stdio: give the server this whole environment (default: PATH, HOME, USER, LOGNAME, SHELL, TERM only)")
		}, nil},
		"connect-timeout": {func(fs *pflag.FlagSet) {
			fs.DurationVar(&f.connectTimeout, "connect-timeout", f.connectTimeout, "limit on connecting and the handshake (0: none)")
		}, nil},
		"timeout": {func(fs *pflag.FlagSet) {
			fs.DurationVar(&f.timeout, "timeout", f.timeout, "limit on waiting for each answer, restarted by every progress notification (0: none)")
		}, nil},
		"max-time": {func(fs *pflag.FlagSet) {
			fs.DurationVar(&f.maxTime, "max-time", f.maxTime, "limit on the whole run, progress or not (0: none)")
		}, nil},
		"root": {func(fs *pflag.FlagSet) {
			fs.StringArrayVar(&a.roots, "root", nil, "declare the roots capability and answer roots/list with this `DIR` (repeatable)")
		}, nil},
		"elicit": {func(fs *pflag.FlagSet) {
			fs.StringVar(&a.elicit, "elicit", a.elicit, "answer the server's elicitation requests with `ANSWER`: a JSON object, @file, accept, decline or cancel (default: ask on the terminal; without one, decline)")
		}, nil},
		"sampling-cmd": {func(fs *pflag.FlagSet) {
			fs.StringVar(&a.samplingCmd, "sampling-cmd", a.samplingCmd, "answer sampling/createMessage with `CMD`: run by sh -c with the request's JSON on stdin; its stdout is the answer, a CreateMessageResult JSON object or plain text (default: decline)")
		}, nil},
		"sampling-llm": {func(fs *pflag.FlagSet) {
			fs.StringVar(&a.samplingLLM.api, "sampling-llm", a.samplingLLM.api, "answer sampling/createMessage through a model's `API`: openai (OPENAI_API_KEY, OPENAI_BASE_URL), openai-compatible (a local model server at OPENAI_BASE_URL) or anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)")
		}, fixed("openai", "openai-compatible", "anthropic")},
		"sampling-model": {func(fs *pflag.FlagSet) {
			fs.StringArrayVar(&a.samplingLLM.models, "sampling-model", nil, "the `MODEL` --sampling-llm asks (default: $"+samplingModelEnv+"); repeated, the first is the default and the server's model hints choose among them")
		}, noFile},
	}
}
