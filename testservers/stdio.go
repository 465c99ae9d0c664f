package testservers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// ServeStdio serves a new Server configured by opts over the stdio
// transport: newline-delimited JSON-RPC read from in and written to out.
// See Server.ServeStdio.
func ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	return NewServer(opts).ServeStdio(ctx, in, out)
}

// ServeStdio serves one session of s over the stdio transport: it reads
// newline-delimited JSON-RPC messages from in and writes its own to out,
// one a line, never two writes at once.
//
// With Options.Eras StatelessOnly or DualEra, a request carrying stateless
// _meta is served as 2026-07-28 (notifications/cancelled cancels it; the
// notifications of a subscriptions/listen request carry its id in
// _meta); DualEra serves the rest as before.
//
// On EOF of in, subscriptions end with their result, tasks end
// (EndTasks), running requests are allowed to finish (requests sent to
// the client fail, as nothing can answer them), their responses written,
// and ServeStdio returns nil (with StdioFaults.IgnoreStdinEOF it goes on
// until ctx ends). When ctx ends first, running requests are cancelled
// and ServeStdio returns ctx.Err(); the goroutine reading in then stays
// until in returns (the caller closes it). With StdioFaults.CrashOnCall,
// it stops writing at the crash and returns ErrCrashed.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	p := &stdioPeer{w: out}
	ss := s.NewSession(p)
	readDone := make(chan error, 1)
	go func() { readDone <- s.readStdio(ctx, in, ss, p) }()
	defer p.close()
	select {
	case err := <-readDone:
		switch {
		case errors.Is(err, ErrCrashed):
			p.close() // nothing more goes out: the process is dead
			s.EndTasks()
			ss.Close()
			return err
		case err == nil && s.opts.Stdio.IgnoreStdinEOF:
			<-ctx.Done()
			s.EndTasks()
			ss.Close()
			return ctx.Err()
		}
		s.endSubscriptions(ss) // a shutdown: they end gracefully
		s.EndTasks()           // and so do the tasks: no tasks/result can come
		ss.Drain()
		return err
	case <-ctx.Done():
		s.EndTasks()
		ss.Close()
		return ctx.Err()
	}
}

// readStdio feeds the session with the lines of in until EOF (nil) or
// a read error.
func (s *Server) readStdio(ctx context.Context, in io.Reader, ss *Session, p *stdioPeer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	calls := 0
	var bridge bridgeState // SessionOnFirstMessage
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 && ctx.Err() == nil {
			if err := s.crash(line, &calls); err != nil {
				return err
			}
			if !s.bridgeLine(ctx, line, ss, p, &bridge) {
				s.handleLine(ctx, line, ss, p)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("test server: reading stdin: %w", err)
		}
	}
}

func (s *Server) handleLine(ctx context.Context, line []byte, ss *Session, p *stdioPeer) {
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		s.log.Warn("stdio: invalid message", "err", err)
		code := int64(jsonrpc.CodeParseError)
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) && !strings.HasPrefix(de.Reason, "not JSON") {
			code = jsonrpc.CodeInvalidRequest
		}
		_ = p.write(&jsonrpc.Message{Error: jsonrpc.NewError(code, err.Error())})
		return
	}
	ss.Handle(ctx, m)
}

// stdioPeer writes a session's messages to out, one a line.
type stdioPeer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error // the first write error; later writes fail with it
}

func (p *stdioPeer) write(m *jsonrpc.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	b, err := jsonrpc.Append(p.buf[:0], m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := p.w.Write(b); err != nil {
		p.err = err
		return err
	}
	if cap(b) <= 1<<20 {
		p.buf = b // keep a modest buffer for the next message
	}
	return nil
}

// close makes later writes fail: nothing reaches out once ServeStdio returned.
func (p *stdioPeer) close() {
	p.mu.Lock()
	if p.err == nil {
		p.err = errSessionClosed
	}
	p.mu.Unlock()
}

// Send writes a notification or request to out.
func (p *stdioPeer) Send(_ context.Context, m *jsonrpc.Message) error { return p.write(m) }

// Reply writes resp to out, if there is one.
func (p *stdioPeer) Reply(_ context.Context, _ jsonrpc.ID, resp *jsonrpc.Message) error {
	if resp == nil {
		return nil
	}
	return p.write(resp)
}

// EnvVar names the environment variable that turns a binary that calls
// RunFromEnv into a stdio test server: its value must be "stdio".
const EnvVar = "ANYMCP_TESTSERVER"

// Environment variables RunFromEnv reads the Options from.
const (
	EnvName         = EnvVar + "_NAME"         // Options.Name
	EnvVersions     = EnvVar + "_VERSIONS"     // Options.Versions, comma-separated
	EnvInstructions = EnvVar + "_INSTRUCTIONS" // Options.Instructions
	EnvPageSize     = EnvVar + "_PAGESIZE"     // Options.PageSize
	EnvLog          = EnvVar + "_LOG"          // a slog level (debug, info, warn, error) for logs on stderr; none when unset

	EnvCrashOnCall    = EnvVar + "_CRASH_ON_CALL"    // StdioFaults.CrashOnCall
	EnvCrashOnOpen    = EnvVar + "_CRASH_ON_OPEN"    // StdioFaults.CrashOnOpenFile
	EnvIgnoreStdinEOF = EnvVar + "_IGNORE_STDIN_EOF" // StdioFaults.IgnoreStdinEOF: "1" or "true"
	EnvIgnoreSIGTERM  = EnvVar + "_IGNORE_SIGTERM"   // StdioFaults.IgnoreSIGTERM: "1" or "true"
	EnvGrandchild     = EnvVar + "_GRANDCHILD"       // StdioFaults.Grandchild: "1" or "true"
	EnvEscaped        = EnvVar + "_ESCAPED"          // StdioFaults.EscapedGrandchild: "1" or "true"
	EnvPIDFile        = EnvVar + "_PIDFILE"          // StdioFaults.PIDFile
	EnvPIDLog         = EnvVar + "_PIDLOG"           // StdioFaults.PIDLog
	EnvFirstMessage   = EnvVar + "_FIRST_MESSAGE"    // StdioFaults.SessionOnFirstMessage: "1" or "true"
	EnvHoldFirst      = EnvVar + "_HOLD_FIRST"       // StdioFaults.HoldFirstAnswer: "1" or "true"

	EnvEras                = EnvVar + "_ERAS"                 // Options.Eras: "initialize", "stateless" or "dual" ("legacy", "modern" too)
	EnvStatelessVersions   = EnvVar + "_MODERN_VERSIONS"      // Options.StatelessVersions, comma-separated
	EnvStatelessInitialize = EnvVar + "_MODERN_INITIALIZE"    // Options.StatelessInitialize: "unsupported" or "not-found"
	EnvCacheTTL            = EnvVar + "_CACHE_TTL"            // Options.CacheTTL, a time.Duration ("30s")
	EnvCacheScope          = EnvVar + "_CACHE_SCOPE"          // Options.CacheScope
	EnvInvalidHeaderTools  = EnvVar + "_INVALID_HEADER_TOOLS" // Options.InvalidHeaderTools: "1" or "true"
	EnvSilentBeforeInit    = EnvVar + "_SILENT_BEFORE_INIT"   // Options.SilentBeforeInitialize: "1" or "true"
)

// RunFromEnv makes the running binary a stdio test server when the
// environment asks for it: if EnvVar is "stdio", it serves ServeStdio on
// os.Stdin and os.Stdout with Options read from the environment (EnvName,
// EnvVersions, EnvInstructions, EnvPageSize, EnvLog, the eras: EnvEras,
// EnvStatelessVersions, EnvStatelessInitialize, EnvCacheTTL, EnvCacheScope,
// EnvInvalidHeaderTools, EnvSilentBeforeInit, the tasks: EnvTasks and
// the EnvTask* variables, and the StdioFaults: EnvCrashOnCall,
// EnvIgnoreStdinEOF, EnvIgnoreSIGTERM, EnvGrandchild, EnvEscaped,
// EnvPIDFile, EnvPIDLog, EnvFirstMessage, EnvHoldFirst) and exits: status 0 after EOF of stdin, 1 on an error,
// CrashExitCode when it crashes as asked. If EnvVar is "sleep", it is the
// grandchild of StdioFaults.Grandchild: it sleeps until killed (at most
// grandchildLife) and exits. Otherwise it returns at once.
//
// Test binaries call it first thing in TestMain; so does, in main, the
// benchmark binary that starts itself as the stdio servers of a fleet
// (bench/fleet). StdioCommand tells
// how to start them that way. The shipped mcpcall never calls it: its
// demo serves stdio through a hidden subcommand, not the environment.
func RunFromEnv() {
	switch os.Getenv(EnvVar) {
	case "stdio":
	case "sleep":
		sleepUntilKilled()
		os.Exit(0)
	default:
		return
	}
	opts, err := OptionsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testservers:", err)
		os.Exit(1)
	}
	os.Exit(ServeProcess(context.Background(), opts))
}

// ServeProcess makes this process a stdio test server: it applies the
// process faults of opts.Stdio (the pid files, an ignored SIGTERM, a
// grandchild), serves ServeStdio on os.Stdin and os.Stdout, and returns
// the exit status: 0 after EOF of stdin, 1 on an error, CrashExitCode
// when it crashed as asked. A binary that starts itself as a stdio
// server by an argument of its own calls it (examples/fleethost).
func ServeProcess(ctx context.Context, opts Options) int {
	err := startProcessFaults(opts.Stdio)
	if err == nil {
		err = ServeStdio(ctx, os.Stdin, os.Stdout, opts)
	}
	if errors.Is(err, ErrCrashed) {
		fmt.Fprintf(os.Stderr, "testservers: crashing on purpose %s (exit status %d)\n", strings.TrimPrefix(err.Error(), ErrCrashed.Error()+" "), CrashExitCode)
		return CrashExitCode
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testservers:", err)
		return 1
	}
	return 0
}

// OptionsFromEnv reads Options from the environment variables RunFromEnv
// uses.
func OptionsFromEnv() (Options, error) {
	opts := Options{
		Name:         os.Getenv(EnvName),
		Instructions: os.Getenv(EnvInstructions),
	}
	if v := os.Getenv(EnvVersions); v != "" {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				opts.Versions = append(opts.Versions, s)
			}
		}
	}
	if v := os.Getenv(EnvStatelessVersions); v != "" {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				opts.StatelessVersions = append(opts.StatelessVersions, s)
			}
		}
	}
	switch v := os.Getenv(EnvEras); v {
	case "", "initialize", "legacy":
	case "stateless", "modern":
		opts.Eras = StatelessOnly
	case "dual":
		opts.Eras = DualEra
	default:
		return opts, fmt.Errorf("%s: %q is not initialize, stateless or dual", EnvEras, v)
	}
	switch v := os.Getenv(EnvStatelessInitialize); v {
	case "", "unsupported":
	case "not-found":
		opts.StatelessInitialize = InitializeMethodNotFound
	default:
		return opts, fmt.Errorf("%s: %q is not unsupported or not-found", EnvStatelessInitialize, v)
	}
	if v := os.Getenv(EnvCacheTTL); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return opts, fmt.Errorf("%s: %w", EnvCacheTTL, err)
		}
		opts.CacheTTL = d
	}
	opts.CacheScope = os.Getenv(EnvCacheScope)
	if v := os.Getenv(EnvPageSize); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return opts, fmt.Errorf("%s: %w", EnvPageSize, err)
		}
		opts.PageSize = n
	}
	if v := os.Getenv(EnvLog); v != "" {
		var level slog.Level
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return opts, fmt.Errorf("%s: %w", EnvLog, err)
		}
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	if v := os.Getenv(EnvCrashOnCall); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return opts, fmt.Errorf("%s: %w", EnvCrashOnCall, err)
		}
		opts.Stdio.CrashOnCall = n
	}
	opts.Stdio.CrashOnOpenFile = os.Getenv(EnvCrashOnOpen)
	for _, b := range []struct {
		name string
		v    *bool
	}{
		{EnvIgnoreStdinEOF, &opts.Stdio.IgnoreStdinEOF},
		{EnvIgnoreSIGTERM, &opts.Stdio.IgnoreSIGTERM},
		{EnvGrandchild, &opts.Stdio.Grandchild},
		{EnvEscaped, &opts.Stdio.EscapedGrandchild},
		{EnvFirstMessage, &opts.Stdio.SessionOnFirstMessage},
		{EnvHoldFirst, &opts.Stdio.HoldFirstAnswer},
		{EnvInvalidHeaderTools, &opts.InvalidHeaderTools},
		{EnvSilentBeforeInit, &opts.SilentBeforeInitialize},
	} {
		if v := os.Getenv(b.name); v != "" {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return opts, fmt.Errorf("%s: %w", b.name, err)
			}
			*b.v = on
		}
	}
	opts.Stdio.PIDFile = os.Getenv(EnvPIDFile)
	opts.Stdio.PIDLog = os.Getenv(EnvPIDLog)
	if err := tasksFromEnv(&opts.Tasks); err != nil {
		return opts, err
	}
	return opts, nil
}

// StdioCommand returns how to start the running binary as a stdio test
// server: its path (os.Executable), its arguments (none), and the
// environment variables to add to the current environment (EnvVar=stdio).
// The binary must call RunFromEnv first thing. StdioEnv gives the
// variables for other Options.
func StdioCommand() (path string, args []string, env []string) {
	path, err := os.Executable()
	if err != nil {
		path = os.Args[0]
	}
	return path, nil, StdioEnv(Options{})
}

// StdioEnv returns the environment variables that make a binary calling
// RunFromEnv serve a stdio test server configured by opts (Logger aside).
func StdioEnv(opts Options) []string {
	env := []string{EnvVar + "=stdio"}
	if opts.Name != "" {
		env = append(env, EnvName+"="+opts.Name)
	}
	if len(opts.Versions) > 0 {
		env = append(env, EnvVersions+"="+strings.Join(opts.Versions, ","))
	}
	if opts.Instructions != "" {
		env = append(env, EnvInstructions+"="+opts.Instructions)
	}
	if opts.PageSize > 0 {
		env = append(env, EnvPageSize+"="+strconv.Itoa(opts.PageSize))
	}
	switch opts.Eras {
	case StatelessOnly:
		env = append(env, EnvEras+"=stateless")
	case DualEra:
		env = append(env, EnvEras+"=dual")
	}
	if len(opts.StatelessVersions) > 0 {
		env = append(env, EnvStatelessVersions+"="+strings.Join(opts.StatelessVersions, ","))
	}
	if opts.StatelessInitialize == InitializeMethodNotFound {
		env = append(env, EnvStatelessInitialize+"=not-found")
	}
	if opts.CacheTTL != 0 {
		env = append(env, EnvCacheTTL+"="+opts.CacheTTL.String())
	}
	if opts.CacheScope != "" {
		env = append(env, EnvCacheScope+"="+opts.CacheScope)
	}
	if opts.InvalidHeaderTools {
		env = append(env, EnvInvalidHeaderTools+"=1")
	}
	if opts.SilentBeforeInitialize {
		env = append(env, EnvSilentBeforeInit+"=1")
	}
	f := opts.Stdio
	if f.CrashOnCall > 0 {
		env = append(env, EnvCrashOnCall+"="+strconv.Itoa(f.CrashOnCall))
	}
	if f.CrashOnOpenFile != "" {
		env = append(env, EnvCrashOnOpen+"="+f.CrashOnOpenFile)
	}
	if f.IgnoreStdinEOF {
		env = append(env, EnvIgnoreStdinEOF+"=1")
	}
	if f.IgnoreSIGTERM {
		env = append(env, EnvIgnoreSIGTERM+"=1")
	}
	if f.Grandchild {
		env = append(env, EnvGrandchild+"=1")
	}
	if f.EscapedGrandchild {
		env = append(env, EnvEscaped+"=1")
	}
	if f.PIDFile != "" {
		env = append(env, EnvPIDFile+"="+f.PIDFile)
	}
	if f.PIDLog != "" {
		env = append(env, EnvPIDLog+"="+f.PIDLog)
	}
	if f.SessionOnFirstMessage {
		env = append(env, EnvFirstMessage+"=1")
	}
	if f.HoldFirstAnswer {
		env = append(env, EnvHoldFirst+"=1")
	}
	return append(env, tasksEnv(opts.Tasks)...)
}
