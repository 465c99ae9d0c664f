//go:build unix

package main

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// mcpcall bridge with OTEL_* set exports a SERVER span for the downstream
// request, a child of its trace context, and the upstream request's CLIENT
// span as the SERVER span's child; the upstream receives the CLIENT span
// as its parent: one trace, client → bridge → upstream.
func TestBridgeCommandContinuesTrace(t *testing.T) {
	recv := newOTLPReceiver()
	hs := httptest.NewServer(recv)
	defer hs.Close()
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	target := client.Command(self, "bridge", up.URL).WithEnv(asMCPCall+"=1", "GORACE=atexit_sleep_ms=0",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+hs.URL, "OTEL_METRICS_EXPORTER=none", "OTEL_SERVICE_NAME=mcpcall-test")
	conn, err := client.Dial(ctx, target, client.WithEra(negotiate.StatelessOnly), client.WithProbeTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	in := client.TraceContext{Traceparent: "00-" + traceID + "-" + parentID + "-01"}
	if _, err := conn.CallTool(client.WithTraceContext(ctx, in), "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil { // the bridge exits, flushing its spans
		t.Fatal(err)
	}
	server := recv.spanOfKind(t, spanKindServer, "tools/call echo")
	if server.TraceID != traceID || server.ParentSpanID != parentID {
		t.Fatalf("the bridge's SERVER span: trace %s, parent %s; want the downstream's %s, %s", server.TraceID, server.ParentSpanID, traceID, parentID)
	}
	call := recv.spanOfKind(t, spanKindClient, "tools/call echo")
	if call.TraceID != traceID || call.ParentSpanID != server.SpanID {
		t.Fatalf("the bridge's upstream span: trace %s, parent %s; want the SERVER span's %s, %s", call.TraceID, call.ParentSpanID, traceID, server.SpanID)
	}
	found := false
	for _, tc := range up.Server().TraceContexts() {
		if tc.Method == "tools/call" && tc.TraceID == traceID && tc.ParentID == call.SpanID {
			found = true
		}
	}
	if !found {
		t.Fatalf("the upstream received %+v, not the bridge's span as parent", up.Server().TraceContexts())
	}
}

// The OTLP span kinds the tests look for (enum values, as OTLP/JSON
// sends them).
const (
	spanKindServer = 2
	spanKindClient = 3
)

// spanOfKind returns the one span of kind named name.
func (o *otlpReceiver) spanOfKind(t *testing.T, kind int, name string) jsonSpan {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var found []jsonSpan
	for _, s := range o.spans {
		if s.Name == name && s.Kind == kind {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %v spans named %q exported", len(found), kind, name)
	}
	return found[0]
}
