package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/mcpconfig"
)

// cli is one run of mcpcall: its streams, environment and flags. Tests
// build one with a fake home, working directory and environment.
type cli struct {
	stdin     io.Reader
	stdout    io.Writer // scrubbed of sec
	stderr    io.Writer // scrubbed of sec, and locked: many goroutines write to it
	sec       *secrets  // the credentials of this run, hidden in all it writes
	stderrTTY bool
	stdinTTY  bool
	// probeTimeout, when set, replaces the library's default wait for a
	// stdio server's answer to the stateless probe (tests: a test server
	// that starts slowly on a busy machine is not a silent initialize-era one).
	probeTimeout time.Duration
	lookupEnv    func(string) (string, bool)
	places       mcpconfig.Places

	f           flags
	answers     answerFlags  // how to answer the server's requests (answers.go)
	prompt      *prompter    // asks a person on the terminal
	log         *slog.Logger // mcpcall's own lines: warnings, and debug with -v
	serverLog   *slog.Logger // the server's notifications/message, at --log-level
	logLevelSet bool         // --log-level was given: ask the server for it too
	run         runState     // what this run did so far, for its error report
	tel         *telemetry   // what OTEL_* asks to export; nil: nothing (telemetry.go)

	openBrowser func(ctx context.Context, url string) error // auth login; tests replace it
	// exchangeTimeout is auth login's auth.Config.ExchangeTimeout: 0, the
	// library's default; tests shorten it.
	exchangeTimeout time.Duration
	// serversDieWithUs: the fleet's stdio servers get SIGKILL when this
	// process dies (a session's gateway, which may be killed itself).
	serversDieWithUs bool
}

// runState is what a run did so far: the error report at its end reads
// it back (where it was connecting, on which transport, and how).
type runState struct {
	ran        bool    // a command's RunE started: later errors are not usage errors
	lastURL    string  // the URL of the connection, or the one tried
	lastTr     string  // the transport of the connection, or the one tried
	lastTarget *target // the HTTP target of the run, for the login hint
	// tokenAnswers: the answers to requests with a kept OAuth token, for
	// the logout hint
	tokenAnswers *tokenAnswers
	stderrShown  bool               // a stdio server's stderr went to ours: errors leave its tail out
	stop         context.CancelFunc // ends --max-time's context
}

// flags are the parsed flags of the command line. Each is registered only
// on the commands that use it (flags.go); one a command lacks keeps the
// default newCLI gives it.
type flags struct {
	json      bool
	verbose   bool
	logLevel  string
	trace     string
	config    string
	server    string
	session   string
	transport string
	era       string
	protocol  string
	headers   []string
	bearerEnv string

	clientID          string
	clientSecretEnv   string
	clientIssuer      string
	clientMetadataURL string
	grant             string
	assertionFile     string
	scopes            []string
	env               []string
	cwd               string
	inherit           bool

	connectTimeout time.Duration
	timeout        time.Duration
	maxTime        time.Duration
}

// run is mcpcall with its arguments and streams: main calls it with the
// process's, tests with their own. ctx cancelled means interrupted (130).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return newCLI(stdin, stdout, stderr, os.LookupEnv, nil).main(ctx, args)
}

// newCLI prepares a run. places nil means the real home and directory.
func newCLI(stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool), places *mcpconfig.Places) *cli {
	sec := &secrets{}
	c := &cli{
		stdin:       stdin,
		stdout:      &scrubbedWriter{w: stdout, sec: sec},
		stderr:      &scrubbedWriter{w: &lockedWriter{w: stderr}, sec: sec, text: true},
		sec:         sec,
		stderrTTY:   isTerminal(stderr),
		stdinTTY:    isTerminal(stdin),
		lookupEnv:   lookupEnv,
		openBrowser: openURL,
		prompt:      newPrompter(stdin),
	}
	if places != nil {
		c.places = *places
	} else {
		c.places = mcpconfig.DefaultPlaces()
	}
	c.places.Getenv = c.getenv // the environment mcpcall was given
	c.log = slog.New(slog.DiscardHandler)
	c.serverLog = c.log
	c.f.setDefaults()
	return c
}

func (c *cli) getenv(k string) string {
	v, _ := c.lookupEnv(k)
	return v
}

// main runs the command line and returns the exit status.
func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) == 1 && args[0] == gatewayCommand {
		// A session's gateway reads its line on stdin: argv is public.
		var req gatewayRequest
		if err := json.NewDecoder(io.LimitReader(c.stdin, maxGatewayRequest)).Decode(&req); err != nil {
			fmt.Fprintf(c.stderr, "%s: reading the line on stdin: %v\n", gatewayCommand, err)
			return exitUsage
		}
		args = append(args, req.Args...)
	}
	root := c.rootCommand()
	root.SetArgs(args)
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	err := root.ExecuteContext(ctx)
	if c.tel != nil {
		c.tel.finish(err) // before c.stop: a run cut by --max-time flushes within the exit grace
	}
	if c.run.stop != nil {
		c.run.stop()
	}
	if err == nil {
		return exitOK
	}
	if !c.run.ran {
		var ee *exitError
		if !errors.As(err, &ee) {
			err = &exitError{code: exitUsage, kind: kindUsage, err: err}
		}
	}
	f := classify(err, ctx.Err() != nil)
	if f.code == exitAuth && c.run.lastTarget != nil && errors.As(err, new(*auth.InteractionRequiredError)) {
		f.login = c.loginCommand(c.run.lastTarget)
	}
	if f.status >= 500 && c.run.lastTarget != nil && c.run.tokenAnswers.failed() {
		f.logout = c.logoutCommand(c.run.lastTarget)
	}
	if c.run.stderrShown {
		f.message = withoutStderrTail(err, f.message)
	}
	if f.url == "" {
		f.url = c.run.lastURL
	}
	f.transport = c.run.lastTr
	f.report(c.stderr, c.f.json)
	return f.code
}

func (c *cli) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpcall",
		Short: "Call any MCP server from the shell",
		Long: `mcpcall connects to an MCP server and runs one command against it. The target
always comes last on the line, so scripts can append it:
  an http(s) URL            Streamable HTTP, or HTTP+SSE for older servers
  -- command args...        a local server spoken to over stdio
  NAME                      a server from your MCP config files (mcpcall servers)
  FILE:NAME                 a server from that config file
  @NAME                     a running session (mcpcall session start; --session NAME)

Results go to stdout: text for people, or with --json exactly one JSON document
(the result as the protocol shapes it, plus "meta": transport, protocolVersion,
serverInfo). Logs, progress and server stderr go to stderr only.

` + exitCodesHelp,
		Example: `  mcpcall tools list http://127.0.0.1:8080/mcp
  mcpcall tools call add a=1 b=2 -- npx -y @modelcontextprotocol/server-everything
  mcpcall tools call echo --args '{"text":"hi"}' --json myserver | jq -r '.content[0].text'
  mcpcall probe -v https://example.com/mcp`,
		Version:           versionString(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: c.setup,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, kind: kindUsage, err: err}
	})
	c.addOutputFlags(root.PersistentFlags())
	root.AddCommand(
		c.toolsCommand(), c.resourcesCommand(), c.promptsCommand(),
		c.completeCommand(), c.pingCommand(), c.probeCommand(), c.callCommand(),
		c.serversCommand(), c.demoCommand(), c.authCommand(), c.tasksCommand(),
		c.bridgeCommand(), c.pinsCommand(), c.sessionCommand(), c.gatewayCommandDef(),
	)
	return root
}

// setup runs before every command: logging, the total time limit.
func (c *cli) setup(cmd *cobra.Command, _ []string) error {
	_, serverLevel, err := parseLogLevel(c.f.logLevel)
	if err != nil {
		return err
	}
	c.logLevelSet = cmd.Flags().Changed("log-level")
	// Two levels, one each: --log-level is the server's (what it is
	// asked to send, and what of it is shown), -v mcpcall's own
	// (warnings always, its debug lines with -v).
	ownLevel := slog.LevelWarn
	if c.f.verbose {
		ownLevel = slog.LevelDebug
	}
	color := colorWanted(c.stderrTTY, c.getenv)
	c.log = newLogger(c.stderr, c.f.json, ownLevel, color)
	c.serverLog = newLogger(c.stderr, c.f.json, serverLevel, color)
	// A negative limit is a slip of the keyboard, not a wish for none: it
	// was taken as no limit at all, or as one that had already run out.
	for _, l := range []struct {
		flag string
		d    time.Duration
	}{{"--connect-timeout", c.f.connectTimeout}, {"--timeout", c.f.timeout}, {"--max-time", c.f.maxTime}} {
		if l.d < 0 {
			return usageErr("%s %v: want a duration of 0 or more (0: no limit)", l.flag, l.d)
		}
	}
	if c.f.maxTime > 0 {
		ctx, cancel := context.WithTimeoutCause(cmd.Context(), c.f.maxTime, errMaxTime)
		c.run.stop = cancel
		cmd.SetContext(ctx)
	}
	tel, err := startTelemetry(cmd.Context(), c.getenv, c.log.Warn)
	if err != nil { // telemetry never fails a run
		c.log.Warn("not exporting OpenTelemetry", "err", err)
	}
	if tel != nil {
		c.tel = tel
		cmd.SetContext(tel.start(cmd.Context(), cmd.CommandPath()))
	}
	return nil
}

// runE wraps a command's body: errors from here on are the command's own.
func (c *cli) runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c.run.ran = true
		return fn(cmd, args)
	}
}

// note prints a line for people on stderr (not in --json mode).
func (c *cli) note(format string, a ...any) {
	if !c.f.json {
		fmt.Fprintf(c.stderr, format+"\n", a...)
	}
}
