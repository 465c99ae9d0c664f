package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// startSession starts the gateway of session name, or reuses the one
// that runs for the same arguments. The session's lock is held from the
// check to the gateway's first answer: of two runs starting one session,
// the second waits and then finds the first's gateway.
func (c *cli) startSession(ctx context.Context, name, display string, idle time.Duration, gwArgs []string) (rec *sessionRecord, reused bool, err error) {
	dir, err := c.sessionDir()
	if err != nil {
		return nil, false, err
	}
	f := sessionFiles{dir, name}
	if err := checkSocketPath(f.sock()); err != nil {
		return nil, false, err
	}
	spec := specHash(gwArgs)
	unlock, err := lockSession(ctx, f)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	old, live, err := probe(ctx, f)
	if err != nil {
		return nil, false, err
	}
	if live != nil {
		if live.rec.Spec != spec {
			return nil, false, usageErr("session %s already runs, for %s (pid %d): stop it first, or pick another name", name, live.rec.Target, live.rec.PID)
		}
		return live.rec, true, nil
	}
	if old != nil {
		c.log.Warn("removing a dead session's files", "session", name)
	}
	cleanStale(f, old)
	rec, err = c.spawnGateway(ctx, f, display, idle, spec, gwArgs)
	return rec, false, err
}

// gatewayRequest is what the starting run hands the gateway on its stdin:
// never on its command line, which other users may read (ps).
type gatewayRequest struct {
	Args []string `json:"args"`
}

// gatewayTestEnv is added to a gateway's environment: tests set what
// makes their binary mcpcall.
var gatewayTestEnv []string

// maxGatewayRequest bounds what the gateway reads on its stdin.
const maxGatewayRequest = 1 << 20

// spawnGateway starts `mcpcall session-gateway` detached (a session of
// its own, stderr to the log), and waits for its word on the ready pipe:
// "ok" once it listens with its upstream connected, or why it failed.
func (c *cli) spawnGateway(ctx context.Context, f sessionFiles, display string, idle time.Duration, spec string, gwArgs []string) (*sessionRecord, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the session's gateway: %w", err)
	}
	logf, err := os.OpenFile(f.log(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("starting the session's gateway: %w", err)
	}
	defer logf.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the session's gateway: %w", err)
	}
	defer readyR.Close()
	args := append([]string{
		"--session-dir=" + f.dir, "--idle=" + idle.String(), "--spec=" + spec, "--display=" + display, f.name,
	}, gwArgs...)
	req, _ := json.Marshal(gatewayRequest{Args: args})
	cmd := exec.Command(self, gatewayCommand)
	cmd.Dir = c.places.Cwd
	cmd.Env = append(os.Environ(), gatewayTestEnv...)
	cmd.Stdin = bytes.NewReader(req)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{readyW} // fd 3
	cmd.SysProcAttr = detachedAttr()
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return nil, fmt.Errorf("starting the session's gateway: %w", err)
	}
	// This run reaps the gateway if it ends first (mcpcall itself exits
	// long before; a test process lives on).
	go func() { _ = cmd.Wait() }()

	wait := 10 * time.Second
	if c.f.connectTimeout > 0 {
		wait += c.f.connectTimeout
	} else {
		wait = 24 * time.Hour // no limit but the run's
	}
	_ = readyR.SetReadDeadline(time.Now().Add(wait))
	stop := context.AfterFunc(ctx, func() { _ = readyR.SetReadDeadline(time.Unix(1, 0)) })
	word, rerr := io.ReadAll(io.LimitReader(readyR, 64<<10))
	stop()
	if s := strings.TrimSpace(string(word)); rerr == nil && s == "ok" {
		rec, err := readRecord(f)
		if err == nil && rec != nil && rec.PID == cmd.Process.Pid {
			return rec, nil
		}
		rerr = errors.New("the gateway said it was ready but wrote no record")
	}
	// Failed: the gateway goes, and what it left.
	killProcess(cmd.Process.Pid)
	killSessionProcesses(cmd.Process.Pid, f.name)
	waitGone(context.Background(), cmd.Process.Pid, stopWait)
	why := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(word)), "error:"))
	if why == "" {
		why = logTail(f.log())
	}
	_ = os.Remove(f.sock())
	_ = os.Remove(f.pid())
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case why != "":
		return nil, &connectError{fmt.Errorf("session %s: the gateway did not start: %s (log: %s)", f.name, why, f.log())}
	case rerr != nil:
		return nil, &connectError{fmt.Errorf("session %s: the gateway did not start: %w (log: %s)", f.name, rerr, f.log())}
	}
	return nil, &connectError{fmt.Errorf("session %s: the gateway ended before it was ready (log: %s)", f.name, f.log())}
}

// logTail is the last lines of a log, for an error message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "; ")
}

// maxSocketPath is the longest Unix socket path every supported system
// takes (sun_path: 108 bytes on Linux, 104 on macOS, with the NUL).
const maxSocketPath = 103

func checkSocketPath(p string) error {
	if len(p) > maxSocketPath {
		return usageErr("the session's socket path %s is %d bytes, over the %d a Unix socket takes: set $%s to a shorter directory", p, len(p), maxSocketPath, envSessionDir)
	}
	return nil
}
