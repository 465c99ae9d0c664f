package testservers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStdioFaultCrashInProcess(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{Stdio: StdioFaults{CrashOnCall: 2}})
	w.initialize(t)
	if m, _ := w.request(t, 1, "tools/call", `{"name":"echo","arguments":{"text":"a"}}`); m.Error != nil {
		t.Fatal(m.Error)
	}
	w.send(t, reqJSON(2, "tools/call", `{"name":"slow","arguments":{"steps":1000,"delayMs":10}}`))
	select {
	case err := <-w.done:
		if !errors.Is(err, ErrCrashed) {
			t.Errorf("ServeStdio: %v", err)
		}
		w.done <- err // for the cleanup
	case <-time.After(testTimeout):
		t.Fatal("no crash")
	}
	for m := range w.msgs {
		t.Errorf("written after the crash: %+v", m)
	}
	if st := w.srv.Stats(); st.Faults["crash"] != 1 || st.ToolCalls["slow"] != 0 || st.ToolCalls["echo"] != 1 {
		t.Errorf("faults %v, tool calls %v", st.Faults, st.ToolCalls)
	}
}

func TestStdioFaultIgnoreStdinEOFInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newStdioWire(t, ctx, Options{Stdio: StdioFaults{IgnoreStdinEOF: true}})
	w.initialize(t)
	w.send(t, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":3,"delayMs":20}}`))
	w.in.Close()
	// The running call still answers, and the server stays.
	if m := w.recv(t); !m.IsResponse() || m.ID.Raw() != "1" {
		t.Errorf("after EOF: %+v", m)
	}
	select {
	case err := <-w.done:
		t.Fatalf("ServeStdio returned %v after EOF", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-w.done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStdio: %v", err)
		}
		w.done <- err
	case <-time.After(testTimeout):
		t.Fatal("ServeStdio did not return when ctx ended")
	}
}

func TestStdioFaultsEnv(t *testing.T) {
	f := StdioFaults{CrashOnCall: 4, IgnoreStdinEOF: true, IgnoreSIGTERM: true, Grandchild: true, PIDFile: "/tmp/x.pid"}
	env := StdioEnv(Options{Stdio: f})
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := OptionsFromEnv()
	if err != nil || got.Stdio != f {
		t.Errorf("OptionsFromEnv: %+v %v (env %q)", got.Stdio, err, env)
	}
	if !slices.Contains(env, EnvCrashOnCall+"=4") || !slices.Contains(env, EnvGrandchild+"=1") {
		t.Errorf("env %q", env)
	}
	for _, name := range []string{EnvCrashOnCall, EnvIgnoreSIGTERM} {
		t.Setenv(name, "maybe")
		if _, err := OptionsFromEnv(); err == nil {
			t.Errorf("%s=maybe accepted", name)
		}
		t.Setenv(name, "")
	}
	if env := StdioEnv(Options{}); len(env) != 1 {
		t.Errorf("no faults, env %q", env)
	}
}
