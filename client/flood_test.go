package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// The flood tests hold the client to a memory bound against a hostile
// server that writes notifications/message as fast as the connection takes
// them, while the host's OnLog handler needs a millisecond for each. The
// client runs in a process of its own — this test binary, run again with
// envFloodRole=client — so that its peak RSS (VmHWM) is the client's
// alone, not the server's or the test framework's; it reports the peak on
// stdout. Over stdio the flooding server is a third process, the same
// binary with envFloodRole=stdio-server.

const (
	envFloodRole     = "ANYMCP_FLOOD_ROLE"     // "client" or "stdio-server"
	envFloodScenario = "ANYMCP_FLOOD_SCENARIO" // "post", "get", "legacy", "stdio"
	envFloodURL      = "ANYMCP_FLOOD_URL"
	envFloodFor      = "ANYMCP_FLOOD_FOR" // how long the server floods (a time.Duration)

	// floodBytes is how much each server floods: more than the limit,
	// which a client that keeps what it is sent passes.
	floodBytes = 384 << 20
	// floodRSSLimit is the peak RSS a flooded client must stay under.
	floodRSSLimit = 256 << 20
)

// floodFor bounds the time each server floods. The race detector slows
// the client tenfold and multiplies its memory: under it the flood is
// shorter, far from floodBytes, and the test only checks that the bounds
// hold with the detector on. The memory bound itself is checked without
// it: .ci/run runs the flood tests once more without -race.
var floodFor = 6 * time.Second

func init() {
	if raceEnabled {
		floodFor = 2 * time.Second
	}
}

// floodReport is what the client process prints.
type floodReport struct {
	PeakRSS  int64  `json:"peakRSS"`  // bytes (VmHWM)
	Handled  int64  `json:"handled"`  // notifications OnLog saw
	Dropped  int64  `json:"dropped"`  // notifications the Conn dropped
	Received int64  `json:"received"` // notifications that reached the Conn's read loop
	Err      string `json:"err,omitempty"`
}

// runFloodFromEnv plays the role envFloodRole names, if any, and exits.
func runFloodFromEnv() {
	switch os.Getenv(envFloodRole) {
	case "client":
		rep := floodClient(os.Getenv(envFloodScenario), os.Getenv(envFloodURL))
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		os.Exit(0)
	case "stdio-server":
		d, _ := time.ParseDuration(os.Getenv(envFloodFor))
		floodStdioServer(os.Stdin, os.Stdout, d)
		os.Exit(0)
	}
}

// floodClient connects, makes the call whose answer comes after the
// flood, and reports its own peak RSS.
func floodClient(scenario, url string) floodReport {
	var handled atomic.Int64
	over := make(chan struct{}) // the flood is over: the handler no longer holds up the queue
	opts := []Option{OnLog(func(mcp.LoggingMessageParams) {
		if handled.Add(1) == 1 {
			<-over // the slowest handler: it takes one notification, then none until the end
		}
	})}
	var target Target
	switch scenario {
	case "post", "get":
		target = URL(url)
		opts = append(opts, WithTransportPolicy(negotiate.StreamableOnly))
	case "legacy":
		target = URL(url)
		opts = append(opts, WithTransportPolicy(negotiate.SSEOnly))
	case "stdio":
		exe, err := os.Executable()
		if err != nil {
			return floodReport{Err: err.Error()}
		}
		target = Command(exe).WithEnv(envFloodRole+"=stdio-server", envFloodFor+"="+os.Getenv(envFloodFor))
	default:
		return floodReport{Err: "unknown scenario " + scenario}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, target, append(opts, WithDefaultTimeout(time.Minute))...)
	if err != nil {
		return floodReport{Err: "dial: " + err.Error()}
	}
	defer c.Close()
	var rep floodReport
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "flood"}, nil); err != nil {
		rep.Err = "call: " + err.Error()
	}
	rep.PeakRSS = peakRSS()
	rep.Handled = handled.Load()
	rep.Dropped = c.DroppedNotifications()
	rep.Received = rep.Handled + rep.Dropped + int64(c.events.len())
	close(over)
	return rep
}

// peakRSS reads this process's peak resident set size from /proc.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// floodNotification is one notifications/message of about 200 bytes.
var floodNotification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood",` +
	`"data":"` + strings.Repeat("the quick brown fox jumps over the lazy dog ", 1400) + `"}}`

// floodChunk repeats prefix+notification+suffix to about 64 KiB (once at
// least): what the server writes at a time.
func floodChunk(prefix, suffix, notification string) []byte {
	one := prefix + notification + suffix
	return bytes.Repeat([]byte(one), max(1, (64<<10)/len(one)))
}

// flood writes chunk to w (flushing after each) until floodBytes went out,
// for d at most, or until a write fails.
func flood(w io.Writer, flush func(), chunk []byte, d time.Duration) {
	var n int64
	for start := time.Now(); n < floodBytes && time.Since(start) < d; {
		k, err := w.Write(chunk)
		n += int64(k)
		if err != nil {
			return
		}
		flush()
	}
}

// floodRequest is the part of a client message the flood servers read.
type floodRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func initializeAnswer(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"flood","version":"0"}}}`
}

func callAnswer(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"flood over"}]}}`
}

// floodServer is a hostile HTTP server: Streamable HTTP flooding a call's
// answer stream ("post") or the GET stream ("get"), or HTTP+SSE flooding
// its one stream ("legacy"). The answer to tools/call comes after the flood.
type floodServer struct {
	scenario string
	d        time.Duration

	once     sync.Once
	getDone  chan struct{} // closed when the GET stream's flood is over
	legacyTx chan string   // messages for the HTTP+SSE stream
	callIDs  chan string   // HTTP+SSE: the id of the call to answer after a flood
	stop     chan struct{} // closed at the end of the test: handlers return
	srv      *httptest.Server
}

func startFloodServer(t *testing.T, scenario string, d time.Duration) *floodServer {
	s := &floodServer{scenario: scenario, d: d, getDone: make(chan struct{}),
		legacyTx: make(chan string, 16), callIDs: make(chan string, 1), stop: make(chan struct{})}
	s.srv = httptest.NewServer(s)
	t.Cleanup(func() {
		close(s.stop)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

func (s *floodServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.scenario == "legacy" {
		s.serveLegacy(w, r)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		first := false
		s.once.Do(func() { first = true })
		if s.scenario != "get" || !first {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush := func() { _ = http.NewResponseController(w).Flush() }
		flush()
		flood(w, flush, floodChunk("data: ", "\n\n", floodNotification), s.d)
		close(s.getDone)
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	var m floodRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch m.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "flood")
		_, _ = io.WriteString(w, initializeAnswer(m.ID))
	case "tools/call":
		if s.scenario == "get" {
			select {
			case <-s.getDone:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, callAnswer(m.ID))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush := func() { _ = http.NewResponseController(w).Flush() }
		flood(w, flush, floodChunk("data: ", "\n\n", floodNotification), s.d)
		_, _ = io.WriteString(w, "data: "+callAnswer(m.ID)+"\n\n")
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// serveLegacy is the HTTP+SSE server: GET opens the stream, POST /message
// takes the client's messages, and the answers go on the stream.
func (s *floodServer) serveLegacy(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var m floodRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		switch m.Method {
		case "initialize":
			s.legacyTx <- initializeAnswer(m.ID)
		case "tools/call":
			s.callIDs <- string(m.ID)
		}
		return
	}
	first := false
	s.once.Do(func() { first = true })
	if !first {
		w.WriteHeader(http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	_, _ = io.WriteString(w, "event: endpoint\ndata: /message\n\n")
	flush()
	for {
		select {
		case m := <-s.legacyTx:
			_, _ = io.WriteString(w, "event: message\ndata: "+m+"\n\n")
			flush()
		case id := <-s.callIDs:
			flood(w, flush, floodChunk("event: message\ndata: ", "\n\n", floodNotification), s.d)
			_, _ = io.WriteString(w, "event: message\ndata: "+callAnswer(json.RawMessage(id))+"\n\n")
			flush()
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
}

// floodStdioServer is the hostile stdio server: it answers initialize and,
// to tools/call, floods stdout for d before the answer.
func floodStdioServer(in io.Reader, out io.Writer, d time.Duration) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var m floodRequest
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			_, _ = io.WriteString(out, initializeAnswer(m.ID)+"\n")
		case "tools/call":
			flood(out, func() {}, floodChunk("", "\n", floodNotification), d)
			_, _ = io.WriteString(out, callAnswer(m.ID)+"\n")
		}
	}
}

// runFloodClient runs the client process against url and returns its report.
func runFloodClient(t *testing.T, scenario, url string) floodReport {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), envFloodRole+"=client", envFloodScenario+"="+scenario,
		envFloodURL+"="+url, envFloodFor+"="+floodFor.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client process: %v; stderr: %s", err, stderr.String())
	}
	var rep floodReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("client report %q: %v; stderr: %s", out, err, stderr.String())
	}
	return rep
}

// TestFloodMemory floods a client whose log handler is slow, on every
// stream a server can write to, and asserts the client's peak RSS.
func TestFloodMemory(t *testing.T) {
	for _, scenario := range []string{"post", "get", "legacy", "stdio"} {
		t.Run(scenario, func(t *testing.T) {
			url := ""
			if scenario != "stdio" {
				url = startFloodServer(t, scenario, floodFor).srv.URL
			}
			rep := runFloodClient(t, scenario, url)
			t.Logf("%s: client peak RSS %.1f MiB; it received %d notifications (%.0f MiB): %d handled, %d dropped",
				scenario, float64(rep.PeakRSS)/(1<<20), rep.Received, float64(rep.Received*int64(len(floodNotification)))/(1<<20),
				rep.Handled, rep.Dropped)
			if rep.Err != "" {
				t.Fatalf("client: %s", rep.Err)
			}
			if rep.PeakRSS <= 0 || rep.PeakRSS >= floodRSSLimit {
				t.Errorf("peak RSS %d bytes (%.1f MiB), want under %d MiB", rep.PeakRSS, float64(rep.PeakRSS)/(1<<20), floodRSSLimit>>20)
			}
			if rep.Handled == 0 {
				t.Error("the handler saw no notification: the flood did not reach the client")
			}
		})
	}
}

// TestFloodHandlerCallsConn: a notification handler that calls the Conn
// gets its answer while a flood keeps the queues full. The server floods
// the GET stream with log records whose params are slow to decode (so
// that the read loop is the slower side and the transport's queue stays
// full), and announces a tools change at once. The tools handler waits
// until the handlers' queue, which cannot drain while it runs, overflows,
// and only then lists the tools: the answer must come through the same
// full queues, and the read loop must go on dropping log records meanwhile.
func TestFloodHandlerCallsConn(t *testing.T) {
	nested := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[` +
		strings.Repeat(`{"k":[1,2,3,"x"]},`, 400) + `0]}}`
	chunk := floodChunk("data: ", "\n\n", nested)
	changed := make(chan struct{}, 1)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			rc := http.NewResponseController(w)
			for {
				select {
				case <-changed:
					_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n\n")
				case <-stop:
					return
				case <-r.Context().Done():
					return
				default:
				}
				if _, err := w.Write(chunk); err != nil {
					return
				}
				_ = rc.Flush()
			}
		}
		var m floodRequest
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			_, _ = io.WriteString(w, initializeAnswer(m.ID))
		case "tools/list":
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":[{"name":"after-the-change","inputSchema":{"type":"object"}}]}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	defer close(stop)

	type listed struct {
		names   []string
		err     error
		dropped int64 // notifications dropped while ListTools ran
	}
	conns := make(chan *Conn, 1)
	got := make(chan listed, 1)
	c, err := Dial(t.Context(), URL(srv.URL), WithTransportPolicy(negotiate.StreamableOnly),
		OnLog(func(mcp.LoggingMessageParams) {}),
		OnToolsChanged(func() {
			c := <-conns
			var l listed
			defer func() { got <- l }()
			before := c.DroppedNotifications()
			// The queue overflows behind this handler; no event tells when.
			if !testkit.Poll(20*time.Second, func() bool { return c.DroppedNotifications() != before }) {
				l.err = errors.New("the handlers' queue never overflowed")
				return
			}
			before = c.DroppedNotifications()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := c.ListTools(ctx, "")
			if l.err = err; err == nil {
				for _, tool := range res.Tools {
					l.names = append(l.names, tool.Name)
				}
			}
			l.dropped = c.DroppedNotifications() - before
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A 1 MiB bound overflows sooner than 16 MiB: a slow machine, or the
	// race detector, routes a few hundred records of these a second.
	c.events.mu.Lock()
	c.events.maxBytes = 1 << 20
	c.events.mu.Unlock()
	conns <- c
	changed <- struct{}{}
	select {
	case l := <-got:
		if l.err != nil || len(l.names) != 1 || l.names[0] != "after-the-change" {
			t.Fatalf("ListTools from the handler: %v %v", l.names, l.err)
		}
		t.Logf("%d log records dropped while the handler's ListTools ran", l.dropped)
	case <-time.After(45 * time.Second):
		t.Fatal("the handler's ListTools got no answer: deadlock")
	}
}

// BenchmarkNotificationFlood measures the whole path of a server
// notification under a flood: the GET stream read and parsed, the bounded
// transport queue, the read loop, the bounded handlers' queue and OnLog.
// One op is one notification; dropped/op is the share the handlers'
// queue dropped (the handler here only counts, but runs on one goroutine).
func BenchmarkNotificationFlood(b *testing.B) {
	const one = `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"a log record of about a hundred bytes, as servers send them"}}` + "\n\n"
	start := make(chan int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			rc := http.NewResponseController(w)
			_ = rc.Flush()
			var n int
			select {
			case n = <-start:
			case <-r.Context().Done():
				return
			}
			bw := bufio.NewWriterSize(w, 64<<10)
			for range n {
				_, _ = bw.WriteString(one)
			}
			_, _ = bw.WriteString(`data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n\n")
			_ = bw.Flush()
			_ = rc.Flush()
			<-r.Context().Done()
			return
		}
		var m floodRequest
		_ = json.NewDecoder(r.Body).Decode(&m)
		if m.Method != "initialize" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, initializeAnswer(m.ID))
	}))
	defer srv.Close()
	done := make(chan struct{})
	var handled atomic.Int64
	c, err := Dial(context.Background(), URL(srv.URL), WithTransportPolicy(negotiate.StreamableOnly),
		OnLog(func(mcp.LoggingMessageParams) { handled.Add(1) }),
		OnToolsChanged(func() { close(done) }))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.SetBytes(int64(len(one)))
	b.ResetTimer()
	start <- b.N
	<-done
	b.StopTimer()
	b.ReportMetric(float64(c.DroppedNotifications())/float64(b.N), "dropped/op")
}
