package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// pipeUpstream is a Dialer of srv served over in-memory pipes, as a stdio
// server, so that a whole bridge runs in one synctest bubble.
func pipeUpstream(srv *testservers.Server) Dialer {
	return func(ctx context.Context, d Downstream) (Upstream, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			_ = srv.ServeStdio(context.Background(), inR, outW)
			outW.Close()
			inR.Close()
		}()
		tr := testkit.NewPipe(inW, outR)
		conn, err := client.Open(ctx, tr, append(d.Options, d.Changes.Options()...)...)
		if err != nil {
			tr.Close()
			return nil, err
		}
		return conn, nil
	}
}

// eofRun writes lines to ServeStdio, closes its input at once, and
// returns every line it wrote, ServeStdio's result and how long, on the
// bubble's clock, it ran after its input ended.
func eofRun(t *testing.T, b *Bridge, lines []string) (out []*jsonrpc.Message, err error, took time.Duration) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- b.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	read := make(chan []*jsonrpc.Message, 1)
	go func() {
		var got []*jsonrpc.Message
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			m, derr := jsonrpc.DecodeMessage(sc.Bytes())
			if derr != nil {
				t.Errorf("line %q: %v", sc.Text(), derr)
				continue
			}
			got = append(got, m)
		}
		read <- got
	}()
	if _, werr := io.WriteString(inW, strings.Join(lines, "\n")+"\n"); werr != nil {
		t.Fatal(werr)
	}
	inW.Close()
	start := time.Now()
	select {
	case err = <-done:
	case <-time.After(2*b.o.EOFGrace + time.Minute): // on the bubble's clock
		t.Errorf("ServeStdio still runs %v after its input ended", time.Since(start))
		b.Close()
		err = <-done
	}
	took = time.Since(start)
	out = <-read
	inR.Close()
	return out, err, took
}

// request is one line of a client's: a request of the initialize era, or
// with stateless, of revision 2026-07-28 (its _meta).
func requestLine(stateless bool, id int, method string, params map[string]any) string {
	if params == nil {
		params = map[string]any{}
	}
	if stateless {
		params["_meta"] = map[string]any{mcp.MetaProtocolVersion: mcp.LatestStatelessVersion, mcp.MetaClientCapabilities: map[string]any{}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// clientLines are a client's first lines: initialize and
// notifications/initialized for the initialize era, none for the
// stateless one.
func clientLines(stateless bool) []string {
	if stateless {
		return nil
	}
	return []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
}

func slowCall(stateless bool, id int, delay time.Duration) string {
	return requestLine(stateless, id, "tools/call", map[string]any{"name": "slow",
		"arguments": map[string]any{"steps": 1, "delayMs": delay.Milliseconds()}})
}

// byID indexes answers by id, failing on one answered twice.
func byID(t *testing.T, msgs []*jsonrpc.Message) map[string]*jsonrpc.Message {
	t.Helper()
	m := map[string]*jsonrpc.Message{}
	for _, msg := range msgs {
		if !msg.IsResponse() {
			continue
		}
		if m[msg.ID.Raw()] != nil {
			t.Errorf("id %s answered twice", msg.ID.Raw())
		}
		m[msg.ID.Raw()] = msg
	}
	return m
}

// When a stdio client's input ends with three requests in flight, the
// bridge finishes them and writes their three answers before it returns,
// without waiting the grace out; it used to end the session at once and
// answer them -32603 "the upstream's answer was lost".
func TestStdioEOFFinishesRequests(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := testservers.NewServer(testservers.Options{Eras: testservers.DualEra})
				b, err := New(t.Context(), pipeUpstream(srv), Options{EOFGrace: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				lines := append(clientLines(stateless),
					slowCall(stateless, 2, time.Second), slowCall(stateless, 3, 2*time.Second), slowCall(stateless, 4, 3*time.Second))
				out, err, took := eofRun(t, b, lines)
				if err != nil {
					t.Errorf("ServeStdio: %v", err)
				}
				answers := byID(t, out)
				for id := 2; id <= 4; id++ {
					a := answers[fmt.Sprint(id)]
					switch {
					case a == nil:
						t.Errorf("request %d: no answer", id)
					case a.Error != nil:
						t.Errorf("request %d: %d %s", id, a.Error.Code, a.Error.Message)
					case !strings.Contains(string(a.Result), `"text":"done`):
						t.Errorf("request %d: %s", id, a.Result)
					}
				}
				if took != 3*time.Second {
					t.Errorf("returned %v after its input ended, want 3s (the slowest call)", took)
				}
				if n := srv.Stats().Cancelled; n != 0 {
					t.Errorf("%d requests cancelled upstream", n)
				}
			})
		})
	}
}

// A request still running EOFGrace after the input ended is cancelled
// upstream (notifications/cancelled) and answered with an error that says
// the bridge stopped it at the end of its input and that it may have run.
func TestStdioEOFGraceStopsHangingCall(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := testservers.NewServer(testservers.Options{Eras: testservers.DualEra})
				const grace = 250 * time.Millisecond
				b, err := New(t.Context(), pipeUpstream(srv), Options{EOFGrace: grace})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				lines := append(clientLines(stateless), slowCall(stateless, 2, time.Hour), requestLine(stateless, 3, "tools/list", nil))
				out, err, took := eofRun(t, b, lines)
				if err != nil {
					t.Errorf("ServeStdio: %v", err)
				}
				answers := byID(t, out)
				if a := answers["3"]; a == nil || a.Error != nil {
					t.Errorf("tools/list: %+v", a)
				}
				a := answers["2"]
				if a == nil || a.Error == nil {
					t.Fatalf("the hanging call: %+v, want an error", a)
				}
				want := "the bridge stopped the request: its input ended and no answer came within 250ms; cancelled upstream, it may have run"
				if a.Error.Code != jsonrpc.CodeInternalError || a.Error.Message != want {
					t.Errorf("the hanging call: %d %q, want %d %q", a.Error.Code, a.Error.Message, jsonrpc.CodeInternalError, want)
				}
				if got := outcomeMember(t, a.Error); got != jsonrpc.OutcomeUnknown {
					t.Errorf("the hanging call's data %s says %q, want the outcome unknown", a.Error.Data, got)
				}
				if took < grace || took > grace+2*time.Second {
					t.Errorf("returned %v after its input ended, want the grace, %v, and the session's close", took, grace)
				}
				synctest.Wait() // the upstream has read all it was sent
				st := srv.Stats()
				if st.Cancelled != 1 {
					t.Errorf("the upstream saw %d notifications/cancelled, want 1", st.Cancelled)
				}
				if !stateless && st.LastCancelledReason != errInputEnded.Error() {
					t.Errorf("cancelled because %q, want %q", st.LastCancelledReason, errInputEnded)
				}
			})
		})
	}
}

// A listen open when the input ends is no work to finish: it ends at once,
// answered, and does not hold the bridge for the grace.
func TestStdioEOFEndsListens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := testservers.NewServer(testservers.Options{Eras: testservers.DualEra})
		b, err := New(t.Context(), pipeUpstream(srv), Options{EOFGrace: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		listen := requestLine(true, 1, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
		out, err, took := eofRun(t, b, []string{listen, slowCall(true, 2, time.Second)})
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		answers := byID(t, out)
		if answers["1"] == nil {
			t.Error("the listen was not answered")
		}
		if a := answers["2"]; a == nil || a.Error != nil {
			t.Errorf("the call: %+v", a)
		}
		if took != time.Second {
			t.Errorf("returned %v after its input ended, want 1s (the call)", took)
		}
	})
}

// failingWriter is a stdout that is gone.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// ServeStdio ends with the write error when its output fails; it used to
// wait for the writer's result a second time, forever.
func TestStdioWriteFailureEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := testservers.NewServer(testservers.Options{})
		b, err := New(t.Context(), pipeUpstream(srv), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		inR, inW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- b.ServeStdio(context.Background(), inR, failingWriter{}) }()
		go func() {
			// Written until ServeStdio stops reading: then the pipe is closed.
			_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n")
		}()
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("ServeStdio: %v, want the write error", err)
			}
			inR.Close()
		default:
			t.Error("ServeStdio still runs after its output failed")
			inR.Close()
			inW.Close()
		}
	})
}
