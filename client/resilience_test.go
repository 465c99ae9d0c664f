package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/stdio"
	"github.com/anymcp/anymcp/testservers"
)

// fastPolicy keeps the resilience tests quick.
var fastPolicy = reconnect.Policy{InitialDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxAttempts: 10}

func stdioTarget(opts testservers.Options) client.Target {
	path, args, env := testservers.StdioCommand()
	env = append(env, testservers.StdioEnv(opts)...)
	return client.Command(path, args...).WithEnv(append(env, "GORACE=atexit_sleep_ms=0")...)
}

func echo(t *testing.T, c *client.Conn, text string) error {
	t.Helper()
	res, err := c.CallTool(ctxT(t), "echo", map[string]string{"text": text})
	if err == nil && res.Content[0].Text != text {
		t.Fatalf("echo answered %q", res.Content[0].Text)
	}
	return err
}

func TestStdioSupervisedCrash(t *testing.T) {
	for _, tt := range []struct {
		name string
		eras testservers.Eras
		era  mcp.Era
	}{
		{"initialize", testservers.InitializeOnly, mcp.EraInitialize},
		// A stateless server keeps no session, but its restarted process is
		// asked server/discover again before anything else goes to it.
		{"stateless", testservers.StatelessOnly, mcp.EraStateless},
		{"dual era", testservers.DualEra, mcp.EraStateless},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reinit := make(chan client.Info, 2)
			target := stdioTarget(testservers.Options{Eras: tt.eras, Stdio: testservers.StdioFaults{CrashOnCall: 3}}).Supervised(fastPolicy)
			c := dial(t, server{name: "stdio", target: target}, client.OnReinitialized(func(i client.Info) { reinit <- i }))
			if got := c.Info().Era; got != tt.era {
				t.Fatalf("era %v, want %v", got, tt.era)
			}
			for i := range 2 {
				if err := echo(t, c, "before"); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			err := echo(t, c, "crash")
			var exit *stdio.ExitError
			if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.As(err, &exit) || exit.ExitCode != testservers.CrashExitCode || exit.Stderr == "" {
				t.Fatalf("the call in flight at the crash: want outcome unknown with the exit status and stderr, got %v", err)
			}
			select {
			case info := <-reinit:
				if info.Era != tt.era {
					t.Fatalf("re-initialized as %v, want %v", info.Era, tt.era)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the restarted process was not re-initialized")
			}
			for i := range 2 { // the new process crashes on its third call too
				if err := echo(t, c, "after"); err != nil {
					t.Fatalf("call %d after the restart: %v", i, err)
				}
			}
			if st := c.State(); st != client.StateReady {
				t.Fatalf("state %v after the restart, want ready", st)
			}
		})
	}
}

func TestStdioCrashUnsupervised(t *testing.T) {
	c := dial(t, server{name: "stdio", target: stdioTarget(testservers.Options{Stdio: testservers.StdioFaults{CrashOnCall: 1}})})
	err := echo(t, c, "crash")
	var exit *stdio.ExitError
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.As(err, &exit) || exit.ExitCode != testservers.CrashExitCode {
		t.Fatalf("want outcome unknown with the exit status, got %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("an unsupervised Conn must end with its process")
	}
	if c.State() != client.StateClosed || !errors.As(c.Err(), &exit) {
		t.Errorf("state %v, err %v", c.State(), c.Err())
	}
}

func TestSessionExpiryRecovers(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
	t.Cleanup(srv.Close) // after the Conn's Close, which ends the session
	reinit := make(chan client.Info, 2)
	c := dial(t, server{target: client.URL(srv.URL)}, client.OnReinitialized(func(i client.Info) { reinit <- i }),
		client.WithReconnectPolicy(fastPolicy))
	if err := c.Subscribe(ctxT(t), "test://static/text"); err != nil {
		t.Fatal(err)
	}
	if n := srv.ExpireAll(); n != 1 {
		t.Fatalf("expired %d sessions", n)
	}
	if err := echo(t, c, "after expiry"); err != nil {
		t.Fatalf("a call after the session expired must be re-sent on a new session: %v", err)
	}
	<-reinit
	st := srv.Server().Stats()
	if st.SessionsCreated != 2 || st.ToolCalls["echo"] != 1 {
		t.Errorf("sessions created %d, echo ran %d times", st.SessionsCreated, st.ToolCalls["echo"])
	}
	if !slices.Contains(st.Subscriptions, "test://static/text") {
		t.Errorf("subscription not restored: %v", st.Subscriptions)
	}
}

// A Conn that listens to the server (here for list changes) has the GET
// stream open, whose reconnect notices a restart without any call.
func TestServerRestartRecoversWithoutACall(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
	t.Cleanup(srv.Close) // after the Conn's Close, which ends the session
	c := dial(t, server{target: client.URL(srv.URL)}, client.WithReconnectPolicy(fastPolicy), client.OnToolsChanged(func() {}))
	srv.Restart() // every session lost, streams cut: the GET stream's reconnect finds out
	ctx := ctxT(t)
	for c.State() == client.StateReady && srv.Server().Stats().SessionsCreated < 2 {
		if !c.WaitForStateChange(ctx, client.StateReady) {
			t.Fatal("the Conn never noticed the restart")
		}
	}
	for c.State() != client.StateReady {
		if !c.WaitForStateChange(ctx, c.State()) {
			t.Fatalf("stuck in %v", c.State())
		}
	}
	if err := echo(t, c, "after restart"); err != nil {
		t.Fatal(err)
	}
	if n := srv.Server().Stats().SessionsCreated; n != 2 {
		t.Errorf("%d sessions created, want 2", n)
	}
}

func TestThrottledCallsAreWaitedOut(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	t.Cleanup(srv.Close)
	c := dial(t, server{target: client.URL(srv.URL)}, client.WithReconnectPolicy(fastPolicy))
	srv.Inject(testservers.FaultRule{Fault: testservers.FaultTooManyRequests, Method: "tools/call", RetryAfter: "0", Count: 1},
		testservers.FaultRule{Fault: testservers.FaultUnavailable, Method: "tools/call", RetryAfter: "0", Count: 1})
	if err := echo(t, c, "patient"); err != nil {
		t.Fatal(err)
	}
	if st := srv.Server().Stats(); st.Rejected != 2 || st.ToolCalls["echo"] != 1 {
		t.Errorf("rejected %d, echo ran %d times", st.Rejected, st.ToolCalls["echo"])
	}

	srv.Inject(testservers.FaultRule{Fault: testservers.FaultTooManyRequests, Method: "tools/call", RetryAfter: "3600", Count: 1})
	err := echo(t, c, "too long")
	var ra *reconnect.RetryAfterError
	if !errors.As(err, &ra) || ra.Wait != time.Hour || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("want a RetryAfterError carrying the hour, got %v", err)
	}
}

func TestCutStreams(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
	t.Cleanup(srv.Close) // after the Conn's Close, which ends the session
	c := dial(t, server{target: client.URL(srv.URL)}, client.WithReconnectPolicy(fastPolicy))
	ctx := ctxT(t)

	// With event ids the stream is resumed: one execution, one answer.
	srv.Inject(testservers.FaultRule{Fault: testservers.FaultDropStream, Method: "tools/call", Count: 1, Retry: 10 * time.Millisecond})
	res, err := c.CallTool(ctx, "once", map[string]string{"key": "resumed"})
	if err != nil || !strings.Contains(res.Content[0].Text, "executed 1 time") {
		t.Fatalf("resumed call: %v %v", res, err)
	}
	// Without ids the outcome is unknown, and the call is not sent again.
	srv.Inject(testservers.FaultRule{Fault: testservers.FaultDropStreamNoIDs, Method: "tools/call", Count: 1})
	_, err = c.CallTool(ctx, "once", map[string]string{"key": "cut"})
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("want outcome unknown, got %v", err)
	}
	// The cut call may still be running on the server: wait for it.
	waitStats(t, srv.Server(), func(st testservers.Stats) bool { return st.Executions == 2 })
	st := srv.Server().Stats()
	if st.Executions != 2 || st.Duplicates != 0 || st.Resumed > 1 { // the cut may land after the answer: resumed 0 or 1
		t.Errorf("executions %d, duplicates %d, resumed %d, faults %v", st.Executions, st.Duplicates, st.Resumed, st.Faults)
	}
	if err := echo(t, c, "still fine"); err != nil {
		t.Fatal(err)
	}
}

// A restarted process that dies before it answers the re-initialization:
// the transport says that request went unanswered, so the recovery tries
// again on the next process at once, instead of waiting out the request
// timeout for an answer that cannot come. (The timeout here is longer
// than the test's own context: a Conn that waits for it fails the test.)
func TestStdioCrashDuringReinitialization(t *testing.T) {
	for _, tt := range []struct {
		name string
		eras testservers.Eras
	}{{"initialize", testservers.InitializeOnly}, {"stateless", testservers.StatelessOnly}} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "crash-on-open")
			target := stdioTarget(testservers.Options{Eras: tt.eras, Stdio: testservers.StdioFaults{CrashOnCall: 2, CrashOnOpenFile: file}}).Supervised(fastPolicy)
			c := dial(t, server{name: "stdio", target: target}, client.WithDefaultTimeout(10*time.Minute))
			if err := echo(t, c, "before"); err != nil {
				t.Fatal(err)
			}
			// The next process will die when it is opened.
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := echo(t, c, "crash"); !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Fatalf("the call in flight at the crash: %v", err)
			}
			if err := echo(t, c, "after"); err != nil {
				t.Fatalf("after two deaths: %v", err)
			}
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("no process was opened while the file existed: the test did not crash one")
			}
		})
	}
}
