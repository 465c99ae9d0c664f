package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A session is a gateway that mcpcall runs in the background, on a Unix
// socket in a directory only the user can open: `mcpcall session start`
// starts it, `--session NAME` or `@NAME` runs a command through it, and the
// upstream it holds (one connection, one stdio process) stays up between
// runs until `session stop`, its idle timeout, or its death. See
// docs/sessions.md.

const (
	// envSessionDir, when set, is the directory of the sessions' sockets
	// (tests: a t.TempDir()). It is checked as the default one is.
	envSessionDir = "MCPCALL_SESSION_DIR"
	// defaultIdle is how long a session waits for a request before it
	// ends.
	defaultIdle = 15 * time.Minute
	// sessionStatusPath is the gateway's own page: its pid and idle time,
	// for list and stop. Asking it does not count as activity.
	sessionStatusPath = "/.mcpcall/session"
	// sessionURL is what a client asks over the socket: the host is a
	// loopback name, as the bridge's Host check wants.
	sessionURL = "http://localhost/mcp"
	// gatewayCommand is the hidden command of the gateway process.
	gatewayCommand = "session-gateway"
	// stopWait bounds how long stop waits after SIGTERM before SIGKILL.
	stopWait = 5 * time.Second
)

var sessionNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkSessionName refuses a name that is not a plain word: it becomes a
// file name, and `@NAME` on the line must never look like a file or a URL.
func checkSessionName(name string) error {
	if sessionNameRE.MatchString(name) {
		return nil
	}
	hint := ""
	if strings.ContainsAny(name, "/:") {
		hint = " (a command goes after `--`; a FILE:NAME config entry whose file starts with @ is ./@FILE:NAME)"
	}
	return usageErr("session name %q: want letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit%s", name, hint)
}

// sessionFiles are the files of one session, all in the sessions'
// directory.
type sessionFiles struct{ dir, name string }

func (f sessionFiles) sock() string { return filepath.Join(f.dir, f.name+".sock") }
func (f sessionFiles) pid() string  { return filepath.Join(f.dir, f.name+".pid") }
func (f sessionFiles) log() string  { return filepath.Join(f.dir, f.name+".log") }
func (f sessionFiles) lock() string { return filepath.Join(f.dir, f.name+".lock") }

// sessionRecord is a session's pid file: written by the gateway once it
// listens, read by start, list, stop and --session.
type sessionRecord struct {
	Name    string    `json:"name"`
	Target  string    `json:"target"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Socket  string    `json:"socket"`
	Idle    string    `json:"idleTimeout"`
	// Era is the upstream's protocol era (runs through the session speak
	// the stateless era to the gateway, whatever it is).
	Era string `json:"era,omitempty"`
	// Spec is a hash of the gateway's arguments: a second start with the
	// same line reuses the session, one with another is refused.
	Spec string `json:"spec"`
}

// sessionStatus is what a live gateway says of itself.
type sessionStatus struct {
	PID       int   `json:"pid"`
	IdleMs    int64 `json:"idleMs"`
	InFlight  int   `json:"inFlight"`
	TimeoutMs int64 `json:"idleTimeoutMs"`
}

// specHash identifies a gateway's arguments without keeping them: they
// may hold credentials.
func specHash(args []string) string {
	h := sha256.Sum256([]byte(strings.Join(args, "\x00")))
	return hex.EncodeToString(h[:16])
}

// sessionDir returns the sessions' directory, made if missing, after
// checking that only this user can reach into it.
func (c *cli) sessionDir() (string, error) {
	if d := c.getenv(envSessionDir); d != "" {
		return ensurePrivateDir(d)
	}
	base := c.getenv("XDG_RUNTIME_DIR")
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no directory for sessions: %w (set $XDG_RUNTIME_DIR or $%s)", err, envSessionDir)
		}
		base = cache
	}
	return ensurePrivateDir(filepath.Join(base, "anymcp", "sessions"))
}

// readRecord reads a session's pid file; nil, nil when there is none.
func readRecord(f sessionFiles) (*sessionRecord, error) {
	b, err := os.ReadFile(f.pid())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r sessionRecord
	if err := json.Unmarshal(b, &r); err != nil || r.PID <= 0 {
		return &sessionRecord{Name: f.name}, nil // torn or foreign: stale
	}
	return &r, nil
}

// writeRecord writes the pid file whole (a rename).
func writeRecord(f sessionFiles, r *sessionRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := f.pid() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, f.pid())
}

// socketClient is an HTTP client whose every connection is to the
// session's socket. Keep-alives are off: a run makes few requests, and
// no idle connection outlives it.
func socketClient(sock string) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
		DisableKeepAlives: true,
	}}
}

// askStatus asks the gateway on the socket for its status.
func askStatus(ctx context.Context, sock string) (*sessionStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost"+sessionStatusPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := socketClient(sock).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the gateway answered %s", resp.Status)
	}
	var st sessionStatus
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// liveSession is a session whose gateway answered.
type liveSession struct {
	rec *sessionRecord
	st  *sessionStatus
}

// probe reads a session's record and asks its gateway. live is nil when
// it does not answer; rec is nil when there is no record at all.
func probe(ctx context.Context, f sessionFiles) (rec *sessionRecord, live *liveSession, err error) {
	rec, err = readRecord(f)
	if err != nil || rec == nil {
		return rec, nil, err
	}
	st, err := askStatus(ctx, f.sock())
	if err != nil || st.PID != rec.PID {
		return rec, nil, nil
	}
	return rec, &liveSession{rec, st}, nil
}

// cleanStale removes what a dead gateway left: its processes (a gateway
// that no longer answers is killed, with what runs in its session), its
// socket and pid file. The caller holds the session's lock.
func cleanStale(f sessionFiles, rec *sessionRecord) {
	if rec != nil && rec.PID > 0 {
		if isGateway(rec.PID, f.name) {
			killProcess(rec.PID)
		}
		killSessionProcesses(rec.PID, f.name)
	}
	// The log stays: it says why the gateway died. The next start
	// empties it.
	for _, p := range []string{f.sock(), f.pid()} {
		_ = os.Remove(p)
	}
}

// sessionCommand is `mcpcall session`: start, list, stop.
func (c *cli) sessionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Keep servers up between runs: start, list and stop background sessions",
		Long: `A session is a gateway mcpcall runs in the background for one target (or,
with --all, the whole fleet), on a Unix socket only you can open. Commands reach it with --session NAME, or with
@NAME as their target; the server behind it (and its state: a browser, a
knowledge graph, an index) stays up between runs. A session ends with
"mcpcall session stop NAME", or by itself after --idle without requests.
See docs/sessions.md.`,
		Example: `  mcpcall session start mem -- npx -y @modelcontextprotocol/server-memory
  mcpcall tools call create_entities --args @entities.json @mem
  mcpcall tools call read_graph --session mem
  mcpcall session list
  mcpcall session stop mem`,
	}
	cmd.AddCommand(c.sessionStartCommand(), c.sessionListCommand(), c.sessionStopCommand())
	return cmd
}

func (c *cli) sessionStartCommand() *cobra.Command {
	idle := defaultIdle
	var all bool
	var gwFile string
	cmd := &cobra.Command{
		Use:   "start NAME TARGET | NAME --all",
		Short: "Start a session: a background gateway to TARGET (or the whole fleet), named NAME",
		Long: `Start a background gateway to TARGET (a URL, a config server name, or
-- command args...) named NAME, and return once it is connected. A session of
that name already running for the same line is reused; one running for another
target is an error. The gateway's log is NAME.log next to its socket.

With --all there is no target: the session serves every server of the config
files (or of --config FILE only) as bridge --all does, each tool under its
fleet name, with --gateway FILE's views, approvals and pins. Each server is
connected on first use, then kept until the session ends.`,
		ValidArgsFunction: c.completeTarget(1),
		Args: c.fleetArgs(&all, 1, func(cmd *cobra.Command, args []string) error {
			if gwFile != "" {
				return usageErr("--gateway serves a fleet: give --all")
			}
			return c.targetArgs(1, 1)(cmd, args)
		}),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			if idle <= 0 {
				return usageErr("--idle %v: want a duration above 0", idle)
			}
			var t *target
			own, display := args, "--all"
			if all {
				if len(args) != 1 {
					return usageErr("session start NAME --all takes no target: %q", args[1])
				}
				if cfg := c.f.config; cfg != "" {
					if !filepath.IsAbs(cfg) {
						cfg = filepath.Join(c.places.Cwd, cfg)
					}
					display += " --config " + cfg
				}
			} else {
				var err error
				if own, t, err = c.splitTarget(cmd, args); err != nil {
					return err
				}
				if t.socket != "" {
					return usageErr("session start: the target is itself a session (%s); give a URL, a server name or `-- command`", t.display)
				}
				display = t.display
			}
			name := own[0]
			if err := checkSessionName(name); err != nil {
				return err
			}
			gwArgs := c.gatewayArgs(cmd, args, t)
			rec, reused, err := c.startSession(cmd.Context(), name, display, idle, gwArgs)
			if err != nil {
				return err
			}
			if reused {
				c.note("session %s already runs (pid %d, started %s): reusing it", name, rec.PID, rec.Started.Format(time.RFC3339))
			} else {
				c.note("session %s started (pid %d): run commands with --session %s or @%s", name, rec.PID, name, name)
			}
			if c.f.json {
				return writeJSON(c.stdout, map[string]any{"session": rec, "reused": reused})
			}
			return nil
		}),
	}
	cmd.Flags().DurationVar(&idle, "idle", idle, "end the session after this long without a request")
	cmd.Flags().BoolVar(&all, "all", false, "no target: serve every server of the config files (or of --config FILE) as one, each tool under its fleet name")
	cmd.Flags().StringVar(&gwFile, "gateway", "", "with --all: views, approvals and pins from the JSON `FILE` (docs/mcpcall.md)")
	c.addFlags(cmd, "config")
	c.addFlags(cmd, oneServerConnFlags...)
	c.addFlags(cmd, protocolFlags...)
	c.addFlags(cmd, limitFlags...)
	c.addOAuthFlags(cmd)
	return cmd
}

// gatewayArgs is the line the gateway parses: the flags start was given
// (but its own), then the target as it was given, or --all (t nil). A
// config server is named by its file, so that the gateway finds the same
// entry; with --all, --config and --gateway are made absolute, so that
// the same line means the same files from any directory.
func (c *cli) gatewayArgs(cmd *cobra.Command, args []string, t *target) []string {
	var out []string
	fromConfig := t != nil && t.name != ""
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "idle", "all", "json":
			return
		case "config", "server":
			if fromConfig {
				return
			}
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+fl.Name+"="+v)
			}
			return
		}
		v := fl.Value.String()
		if t == nil && (fl.Name == "config" || fl.Name == "gateway") && !filepath.IsAbs(v) {
			v = filepath.Join(c.places.Cwd, v)
		}
		out = append(out, "--"+fl.Name+"="+v)
	})
	switch dash := cmd.ArgsLenAtDash(); {
	case t == nil:
		out = append(out, "--all")
	case fromConfig:
		out = append(out, "--config="+t.source, "--server="+t.name)
	case dash >= 0:
		out = append(out, "--")
		out = append(out, args[dash:]...)
	default:
		out = append(out, args[len(args)-1])
	}
	return out
}

func (c *cli) sessionListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the running sessions (and remove what dead ones left)",
		Args:  cobra.NoArgs,
		RunE: c.runE(func(cmd *cobra.Command, _ []string) error {
			rows, err := c.listSessions(cmd.Context())
			if err != nil {
				return err
			}
			if c.f.json {
				return writeJSON(c.stdout, map[string]any{"sessions": rows})
			}
			if len(rows) == 0 {
				c.note("no sessions")
				return nil
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTARGET\tPID\tSTARTED\tIDLE\tSOCKET")
			for _, r := range rows {
				idle := (time.Duration(r.IdleMs) * time.Millisecond).Round(time.Second).String()
				if r.InFlight > 0 {
					idle = "busy"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", r.Name, r.Target, r.PID, r.Started.Local().Format(time.DateTime), idle, r.Socket)
			}
			return tw.Flush()
		}),
	}
}

// sessionRow is one line of session list.
type sessionRow struct {
	sessionRecord
	IdleMs   int64 `json:"idleMs"`
	InFlight int   `json:"inFlight"`
}

// listSessions reads every record of the directory: live sessions are
// listed, dead ones cleaned (unless another run holds their lock).
func (c *cli) listSessions(ctx context.Context) ([]sessionRow, error) {
	dir, err := c.sessionDir()
	if err != nil {
		return nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	if err != nil {
		return nil, err
	}
	rows := []sessionRow{}
	for _, p := range paths {
		f := sessionFiles{dir, strings.TrimSuffix(filepath.Base(p), ".pid")}
		rec, live, err := probe(ctx, f)
		if err != nil || rec == nil {
			continue
		}
		if live == nil {
			if unlock, ok := tryLock(f); ok {
				// Asked again under the lock: a start may have just ended.
				if rec, live, _ = probe(ctx, f); live == nil {
					cleanStale(f, rec)
					c.log.Warn("removed a dead session's files", "session", f.name)
				}
				unlock()
			}
			if live == nil {
				continue
			}
		}
		rows = append(rows, sessionRow{*live.rec, live.st.IdleMs, live.st.InFlight})
	}
	return rows, nil
}

func (c *cli) sessionStopCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a session: its gateway, and the server it runs",
		Args:  cobra.ExactArgs(1),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := checkSessionName(name); err != nil {
				return err
			}
			was, err := c.stopSession(cmd.Context(), name)
			if err != nil {
				return err
			}
			if was {
				c.note("session %s stopped", name)
			} else {
				c.note("session %s was not running", name)
			}
			return nil
		}),
	}
}

// stopSession ends a session: SIGTERM, a bounded wait, then SIGKILL, and
// removes its files. It reports whether a gateway was running.
func (c *cli) stopSession(ctx context.Context, name string) (bool, error) {
	dir, err := c.sessionDir()
	if err != nil {
		return false, err
	}
	f := sessionFiles{dir, name}
	unlock, err := lockSession(ctx, f)
	if err != nil {
		return false, err
	}
	defer unlock()
	rec, live, err := probe(ctx, f)
	if err != nil {
		return false, err
	}
	if live == nil {
		cleanStale(f, rec)
		return false, nil
	}
	pid := live.rec.PID
	terminateProcess(pid)
	if !waitGone(ctx, pid, stopWait) {
		c.log.Warn("the gateway did not end on SIGTERM: killing it", "session", name, "pid", pid)
		killProcess(pid)
		waitGone(ctx, pid, stopWait)
	}
	killSessionProcesses(pid, name)
	// The gateway removed its socket and pid file, unless it was killed;
	// its log and the lock go too (this run holds the lock: removing the
	// file is safe, see lockOnce).
	for _, p := range []string{f.sock(), f.pid(), f.log(), f.lock()} {
		_ = os.Remove(p)
	}
	return true, nil
}

// waitGone waits up to d for pid to end (a zombie counts as ended).
func waitGone(ctx context.Context, pid int, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for processAlive(pid) {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// completeSessions completes --session with the names of the sessions
// that have a pid file (no gateway is asked: completion must be quick).
func (c *cli) completeSessions(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	if dir, err := c.sessionDir(); err == nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
		for _, p := range paths {
			if name := strings.TrimSuffix(filepath.Base(p), ".pid"); strings.HasPrefix(name, prefix) {
				out = append(out, name)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
