package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/access"
	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/gateway"
)

// served is what a session's gateway serves: an MCP server's HTTP faces
// and what ends them. One target gives a bridge (servedBridge); the whole
// fleet (--all) gives the fleet's gateway (sessionFleet).
type served interface {
	Handler() http.Handler
	Close() error
}

// servedBridge connects to t and serves it through the bridge: one
// upstream connection, kept for the session's life. A stdio server is
// killed with the gateway, even by SIGKILL (Linux).
// era is the upstream's: runs through the session speak it to the
// bridge, and see what a direct run sees.
func (c *cli) servedBridge(ctx context.Context, t *target) (_ served, era string, _ error) {
	if t.isCommand() {
		cmd := *t.cmd
		cmd.KillWithParent = true
		t = &target{cmd: &cmd, display: t.display, name: t.name, source: t.source}
	}
	dial, secrets, err := c.bridgeDialer(t)
	if err != nil {
		return nil, "", err
	}
	o := bridge.Options{Secrets: secrets, Redact: c.sec.scrub, Logger: c.log}
	dctx, cancel := context.WithCancel(ctx)
	if c.f.connectTimeout > 0 {
		dctx, cancel = context.WithTimeoutCause(ctx, c.f.connectTimeout, errConnectTimeout)
	}
	defer cancel()
	b, err := bridge.New(dctx, dial, o)
	if err != nil {
		return nil, "", &connectError{fmt.Errorf("connecting to %s: %w", t.display, err)}
	}
	return b, string(b.Info().Era), nil
}

// sessionFleet is the gateway of the whole fleet (--all), as bridge --all
// builds it, for a session: the socket's mode is its access control, so
// every client of the socket is served the default view, and --gateway
// FILE may name no token and no "access". Each server is connected on
// first use, then kept; a stdio server is killed with the gateway.
func (c *cli) sessionFleet(ctx context.Context, path string) (served, error) {
	c.serversDieWithUs = true
	o := bridge.Options{Redact: c.sec.scrub, Logger: c.log}
	if c.tel != nil {
		o.Observer = c.tel.observer.Server()
	}
	gw, err := c.fleetGateway(ctx, path, o, func(g *gatewayFile, cfg *gateway.Config, haveToken bool) error {
		if haveToken || (g != nil && g.Access != nil) {
			return usageErr("--gateway: a session's socket admits only you: views' tokens and \"access\" are for bridge --all --listen")
		}
		if len(cfg.Views) > 0 && !slices.ContainsFunc(cfg.Views, func(v gateway.View) bool { return v.Name == "" }) {
			return usageErr("--gateway: a session serves the default view (named \"\"), and FILE has none")
		}
		cfg.Access = socketClients
		return nil
	})
	if err != nil {
		return nil, err
	}
	return gw, nil
}

// socketClients admits every client of the session's socket, which only
// its user can open, to the default view.
var socketClients = access.PolicyFunc(func(*http.Request) (access.Grant, error) {
	return access.Grant{Subject: "session"}, nil
})

// gatewayFlags are the hidden command's own flags, set by start.
type gatewayFlags struct {
	dir     string
	idle    time.Duration
	spec    string
	display string
	all     bool   // the whole fleet
	gateway string // with all: --gateway FILE
}

// gatewayCommandDef is the hidden command the gateway process runs. Its
// line comes on stdin (root.go), never in argv.
func (c *cli) gatewayCommandDef() *cobra.Command {
	var gf gatewayFlags
	cmd := &cobra.Command{
		Use:    gatewayCommand + " NAME TARGET",
		Hidden: true,
		Args:   c.fleetArgs(&gf.all, 1, c.targetArgs(1, 1)),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			ready := readyPipe()
			if gf.all {
				if err := checkSessionName(args[0]); err != nil {
					return tellReady(ready, c, err)
				}
				open := func(ctx context.Context) (served, string, error) {
					src, err := c.sessionFleet(ctx, gf.gateway)
					return src, "", err
				}
				return c.runSessionGateway(cmd.Context(), &gf, args[0], "--all", open, ready)
			}
			own, t, err := c.splitTarget(cmd, args)
			if err == nil {
				err = checkSessionName(own[0])
			}
			if err != nil {
				return tellReady(ready, c, err)
			}
			open := func(ctx context.Context) (served, string, error) { return c.servedBridge(ctx, t) }
			return c.runSessionGateway(cmd.Context(), &gf, own[0], t.display, open, ready)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&gf.dir, "session-dir", "", "")
	f.DurationVar(&gf.idle, "idle", defaultIdle, "")
	f.StringVar(&gf.spec, "spec", "", "")
	f.StringVar(&gf.display, "display", "", "")
	f.BoolVar(&gf.all, "all", false, "")
	f.StringVar(&gf.gateway, "gateway", "", "")
	c.addFlags(cmd, "config")
	c.addFlags(cmd, oneServerConnFlags...)
	c.addFlags(cmd, protocolFlags...)
	c.addFlags(cmd, limitFlags...)
	c.addOAuthFlags(cmd)
	return cmd
}

// tellReady writes the gateway's word to the starting run and closes the
// pipe: "ok", or the error.
func tellReady(ready io.WriteCloser, c *cli, err error) error {
	if ready == nil {
		return err
	}
	if err != nil {
		fmt.Fprintf(ready, "error: %s\n", c.sec.scrub(err.Error()))
	} else {
		fmt.Fprintln(ready, "ok")
	}
	ready.Close()
	return err
}

// runSessionGateway serves the session: it opens its source (connects
// upstream), listens on the socket, writes the pid file, says ok, and
// serves until SIGTERM or the idle timeout. It removes its socket and pid
// file as it ends. display names the target when start gave none.
func (c *cli) runSessionGateway(ctx context.Context, gf *gatewayFlags, name, display string, open func(context.Context) (served, string, error), ready io.WriteCloser) error {
	f := sessionFiles{gf.dir, name}
	if gf.idle <= 0 {
		return tellReady(ready, c, usageErr("--idle %v: want a duration above 0", gf.idle))
	}
	privateUmask()
	src, era, err := open(ctx)
	if err != nil {
		return tellReady(ready, c, err)
	}
	defer src.Close()
	l, err := net.Listen("unix", f.sock())
	if err != nil {
		return tellReady(ready, c, fmt.Errorf("listening on %s: %w", f.sock(), err))
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false) // removed below, if still ours
	if err := os.Chmod(f.sock(), 0o600); err != nil {
		l.Close()
		return tellReady(ready, c, err)
	}
	if gf.display != "" {
		display = gf.display
	}
	rec := &sessionRecord{
		Name: name, Target: display, PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second),
		Socket: f.sock(), Idle: gf.idle.String(), Spec: gf.spec, Era: era,
	}
	if err := writeRecord(f, rec); err != nil {
		l.Close()
		return tellReady(ready, c, err)
	}
	w := newIdleWatch(gf.idle)
	defer w.stop()
	srv := &http.Server{
		Handler:           w.wrap(src.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(c.log.Handler(), slog.LevelDebug),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	c.log.Info("session serving", "session", name, "target", display, "socket", f.sock(), "idle", gf.idle)
	_ = tellReady(ready, c, nil)

	var why string
	select {
	case <-ctx.Done():
		why = "signalled"
	case <-w.expired:
		why = "idle for " + gf.idle.String()
	case err = <-done:
		why = fmt.Sprintf("serving failed: %v", err)
	}
	fmt.Fprintf(c.stderr, "session %s ending: %s\n", name, why)
	src.Close() // ends the long-lived streams, so that Shutdown can finish
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
	}
	cancel()
	select {
	case <-done:
	default:
		srv.Close()
		<-done
	}
	c.removeOwnFiles(f)
	return nil
}

// removeOwnFiles removes the session's files if they are still this
// gateway's; with the lock free, the lock file and the log go too, and
// nothing is left.
func (c *cli) removeOwnFiles(f sessionFiles) {
	if r, _ := readRecord(f); r == nil || r.PID != os.Getpid() {
		return // another gateway's by now
	}
	_ = os.Remove(f.sock())
	_ = os.Remove(f.pid())
	if unlock, ok := tryLock(f); ok {
		_ = os.Remove(f.log())
		_ = os.Remove(f.lock())
		unlock()
	}
}

// idleWatch counts the requests in flight and fires expired when none
// came for idle.
type idleWatch struct {
	idle     time.Duration
	expired  chan struct{}
	mu       sync.Mutex
	inFlight int
	last     time.Time
	timer    *time.Timer
	once     sync.Once
}

func newIdleWatch(idle time.Duration) *idleWatch {
	w := &idleWatch{idle: idle, expired: make(chan struct{}), last: time.Now()}
	w.timer = time.AfterFunc(idle, w.check)
	return w
}

// check runs when the timer fires: it ends the session unless a request
// is in flight or one ended since (its end re-armed the timer).
func (w *idleWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inFlight == 0 && time.Since(w.last) >= w.idle {
		w.once.Do(func() { close(w.expired) })
	}
}

func (w *idleWatch) begin() {
	w.mu.Lock()
	w.inFlight++
	w.timer.Stop()
	w.mu.Unlock()
}

func (w *idleWatch) end() {
	w.mu.Lock()
	w.inFlight--
	w.last = time.Now()
	if w.inFlight == 0 {
		w.timer.Reset(w.idle)
	}
	w.mu.Unlock()
}

func (w *idleWatch) stop() { w.timer.Stop() }

func (w *idleWatch) status() sessionStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := sessionStatus{PID: os.Getpid(), InFlight: w.inFlight, TimeoutMs: w.idle.Milliseconds()}
	if w.inFlight == 0 {
		st.IdleMs = time.Since(w.last).Milliseconds()
	}
	return st
}

// wrap serves the status page itself (not a request of the session's:
// the idle time runs on) and counts every other request.
func (w *idleWatch) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sessionStatusPath {
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(w.status())
			return
		}
		w.begin()
		defer w.end()
		h.ServeHTTP(rw, r)
	})
}
