package ladder_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/legacy"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as the stdio test server (dial_test.go)
	goleak.VerifyTestMain(m)
}

func initRequest() *jsonrpc.Message {
	params, _ := json.Marshal(mcp.InitializeParams{
		ProtocolVersion: mcp.LatestInitializeVersion,
		ClientInfo:      mcp.Implementation{Name: "negotiate-test", Version: "0"},
	})
	return &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "initialize", Params: params}
}

// initializeHello opens with initialize only: the ladder of the initialize era.
func initializeHello() ladder.Hello { return ladder.Hello{Initialize: initRequest()} }

func connect(t *testing.T, url string, cfg ladder.Config) (*ladder.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := ladder.Connect(ctx, url, initializeHello(), cfg)
	if err == nil {
		t.Cleanup(func() { res.Transport.Close() })
	}
	return res, err
}

func protocolVersion(t *testing.T, res *ladder.Result) string {
	t.Helper()
	var r mcp.InitializeResult
	if err := json.Unmarshal(res.Response.Result, &r); err != nil {
		t.Fatalf("initialize result: %v (%s)", err, res.Response.Result)
	}
	return r.ProtocolVersion
}

func TestStatelessServer(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	res, err := connect(t, srv.URL, ladder.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if res.Name != negotiate.StreamableHTTP || rep.Chosen != negotiate.StreamableHTTP || len(rep.Attempts) != 1 {
		t.Fatalf("report %+v", rep)
	}
	a := rep.Attempts[0]
	if a.Method != "POST" || a.Status != 200 || a.Error != "" || a.Duration <= 0 {
		t.Errorf("attempt %+v", a)
	}
	if v := protocolVersion(t, res); v != mcp.LatestInitializeVersion {
		t.Errorf("version %s", v)
	}
}

// The classic old server: POST to its URL is refused, GET there is HTTP+SSE.
func TestFallbackStatuses(t *testing.T) {
	for _, status := range []int{400, 404, 405} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: status, GETServesLegacy: true})
			defer srv.Close()
			res, err := connect(t, srv.URL, ladder.Config{})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			if res.Name != negotiate.SSE || len(rep.Attempts) != 2 {
				t.Fatalf("report %s", rep)
			}
			if a := rep.Attempts[0]; a.Status != status || !strings.Contains(a.Decision, "fallback") {
				t.Errorf("first attempt %+v", a)
			}
			if a := rep.Attempts[1]; a.Method != "GET" || a.Status != 200 || a.Error != "" {
				t.Errorf("second attempt %+v", a)
			}
			if v := protocolVersion(t, res); v != mcp.Version20241105 {
				t.Errorf("version %s", v)
			}
			// The transport is live: a ping goes through.
			if err := res.Transport.Send(context.Background(), &jsonrpc.Message{ID: jsonrpc.Int(2), Method: "ping"}); err != nil {
				t.Fatal(err)
			}
			if m, err := res.Transport.Recv(); err != nil || m.ID.Raw() != "2" {
				t.Fatalf("ping answer %+v %v", m, err)
			}
		})
	}
}

// Statuses that are real errors are reported as themselves: no GET.
func TestNoFallback(t *testing.T) {
	for _, status := range []int{401, 403, 406, 415, 500, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: status, PostBody: "nope", GETServesLegacy: true})
			defer srv.Close()
			_, err := connect(t, srv.URL, ladder.Config{})
			var he *jsonrpc.HTTPError
			if !errors.As(err, &he) || he.StatusCode != status {
				t.Fatalf("want HTTPError %d, got %v", status, err)
			}
			var ne *negotiate.Error
			if !errors.As(err, &ne) || len(ne.Report.Attempts) != 1 || !strings.Contains(ne.Report.Attempts[0].Decision, "not a reason to fall back") {
				t.Fatalf("report: %+v", ne)
			}
			if hits := srv.Hits(); hits["GET /mcp"] != 0 {
				t.Errorf("a %d must not lead to a GET: %v", status, hits)
			}
		})
	}
}

func TestNoFallbackOnTimeout(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404, PostDelay: 5 * time.Second, GETServesLegacy: true})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ladder.Connect(ctx, srv.URL, initializeHello(), ladder.Config{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if hits := srv.Hits(); hits["GET /mcp"] != 0 {
		t.Errorf("a timeout must not lead to a GET: %v", hits)
	}
	if !strings.Contains(err.Error(), "no answer") {
		t.Errorf("message %q", err)
	}
}

func TestNoFallbackOnConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = connect(t, "http://"+addr+"/mcp", ladder.Config{})
	var ne *negotiate.Error
	if !errors.As(err, &ne) || len(ne.Report.Attempts) != 1 {
		t.Fatalf("want one failed attempt, got %v", err)
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Errorf("the real cause must show: %v", err)
	}
}

func TestBothRungsFail(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404, GETStatus: 404})
	defer srv.Close()
	_, err := connect(t, srv.URL, ladder.Config{})
	want := "POST " + srv.URL + " (initialize) → 404; GET " + srv.URL + " → 404, not an SSE stream"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	var ne *negotiate.Error
	if !errors.As(err, &ne) || len(ne.Report.Attempts) != 2 || ne.Report.Chosen != "" {
		t.Fatalf("report %+v", ne)
	}
	if s := ne.Report.String(); !strings.Contains(s, "no transport worked") {
		t.Errorf("report text:\n%s", s)
	}
}

func TestNotSSEOnGet(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETStatus: 200})
	defer srv.Close()
	_, err := connect(t, srv.URL, ladder.Config{})
	var ns *legacy.NotSSEError
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "not an SSE stream") {
		t.Fatalf("want NotSSEError, got %v", err)
	}
}

func TestNewerServer(t *testing.T) {
	tests := []struct {
		name      string
		opts      testservers.StatusOptions
		supported []string
	}{
		{"404 -32601", testservers.StatusOptions{PostStatus: 404, PostBodyFunc: testservers.MethodNotFoundBody, GETServesLegacy: true}, nil},
		{"400 -32022", testservers.StatusOptions{PostStatus: 400, PostBodyFunc: testservers.UnsupportedVersionBody("2026-07-28"), GETServesLegacy: true}, []string{"2026-07-28"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testservers.StartStatus(tt.opts)
			defer srv.Close()
			_, err := connect(t, srv.URL, ladder.Config{})
			var ne *negotiate.NewerServerError
			if !errors.As(err, &ne) {
				t.Fatalf("want NewerServerError, got %v", err)
			}
			if strings.Join(ne.Supported, ",") != strings.Join(tt.supported, ",") || !strings.Contains(err.Error(), "newer") {
				t.Errorf("error %v supported %v", err, ne.Supported)
			}
			if hits := srv.Hits(); hits["GET /mcp"] != 0 {
				t.Errorf("a newer server must not be probed for HTTP+SSE: %v", hits)
			}
		})
	}
}

func TestCrossOriginEndpointRefused(t *testing.T) {
	srv := testservers.StartLegacy(testservers.LegacyOptions{Endpoint: testservers.EndpointCrossOrigin})
	defer srv.Close()
	_, err := connect(t, srv.URL, ladder.Config{Policy: negotiate.SSEOnly, Common: httpopt.Common{Header: http.Header{"Authorization": {"Bearer secret"}}}})
	var co *legacy.CrossOriginError
	if !errors.As(err, &co) {
		t.Fatalf("want CrossOriginError, got %v", err)
	}
	if n := srv.CrossOriginHits(); n != 0 {
		t.Errorf("%d requests reached the other origin", n)
	}
}

func TestEndpointForms(t *testing.T) {
	for _, mode := range []testservers.EndpointMode{testservers.EndpointRelative, testservers.EndpointAbsolute} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := testservers.StartLegacy(testservers.LegacyOptions{Endpoint: mode, EndpointDelay: 50 * time.Millisecond})
			defer srv.Close()
			res, err := connect(t, srv.URL, ladder.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Name != negotiate.SSE {
				t.Fatalf("report %s", res.Report)
			}
		})
	}
}

func TestHybrid(t *testing.T) {
	for _, same := range []bool{false, true} {
		srv := testservers.StartHybrid(testservers.HybridOptions{SamePath: same})
		res, err := connect(t, srv.URL, ladder.Config{})
		if err != nil || res.Name != negotiate.StreamableHTTP {
			t.Fatalf("same path %v: %v %v", same, res, err)
		}
		sse, err := connect(t, srv.SSEURL, ladder.Config{Policy: negotiate.SSEOnly})
		if err != nil || sse.Name != negotiate.SSE {
			t.Fatalf("same path %v, SSE: %v", same, err)
		}
		if !same {
			auto, err := connect(t, srv.SSEURL, ladder.Config{})
			if err != nil || auto.Name != negotiate.SSE || len(auto.Report.Attempts) != 2 {
				t.Fatalf("auto on the SSE URL: %v %v", auto, err)
			}
		}
		res.Transport.Close()
		sse.Transport.Close()
		srv.Close()
	}
}

func TestPolicies(t *testing.T) {
	legacySrv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETServesLegacy: true})
	defer legacySrv.Close()
	statelessSrv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer statelessSrv.Close()

	_, err := connect(t, legacySrv.URL, ladder.Config{Policy: negotiate.StreamableOnly})
	if err == nil || legacySrv.Hits()["GET /mcp"] != 0 {
		t.Errorf("StreamableOnly must not GET: %v %v", err, legacySrv.Hits())
	}
	posts := legacySrv.Hits()["POST /mcp"]
	res, err := connect(t, legacySrv.URL, ladder.Config{Policy: negotiate.SSEOnly})
	if err != nil || res.Name != negotiate.SSE || legacySrv.Hits()["POST /mcp"] != posts {
		t.Errorf("SSEOnly must not POST to the URL: %v %v", err, legacySrv.Hits())
	}
	res, err = connect(t, statelessSrv.URL, ladder.Config{Policy: negotiate.SSEFirst})
	if err != nil || res.Name != negotiate.StreamableHTTP || len(res.Report.Attempts) != 2 || res.Report.Attempts[0].Method != "GET" {
		t.Fatalf("SSEFirst on a stateless server: %v %v", res, err)
	}
	if _, err := negotiate.ParseTransportPolicy("sse-first"); err != nil {
		t.Error(err)
	}
	if _, err := negotiate.ParseTransportPolicy("bogus"); err == nil {
		t.Error("unknown policy accepted")
	}
}

func TestCacheSkipsProbe(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404, GETServesLegacy: true})
	defer srv.Close()
	cache := negotiate.NewCache(time.Minute)
	if _, err := connect(t, srv.URL, ladder.Config{Cache: cache}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Hits()["POST /mcp"]; got != 1 {
		t.Fatalf("cold: %d POST probes", got)
	}
	res, err := connect(t, srv.URL, ladder.Config{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Hits()["POST /mcp"]; got != 1 {
		t.Errorf("cached: a known-legacy URL got a POST probe (%d in all)", got)
	}
	if !res.Report.FromCache || len(res.Report.Attempts) != 1 || res.Name != negotiate.SSE {
		t.Errorf("report %s", res.Report)
	}
}

func TestStaleCacheRunsLadderAgain(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{NoGETStream: true})
	defer srv.Close()
	cache := negotiate.NewCache(time.Minute)
	cache.Store(srv.URL, negotiate.SSE, mcp.EraInitialize) // it was legacy once; now it is modern
	res, err := connect(t, srv.URL, ladder.Config{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != negotiate.StreamableHTTP || len(res.Report.Attempts) != 2 || !res.Report.FromCache {
		t.Fatalf("report %s", res.Report)
	}
	if got, _, _ := cache.Lookup(srv.URL); got != negotiate.StreamableHTTP {
		t.Errorf("cache now says %q", got)
	}
}

// A server cached as HTTP+SSE that moved to a stateless Streamable HTTP
// server, whose GET holds an idle SSE stream open and sends nothing: the
// wait for the endpoint event is bounded, the cache is taken for stale,
// and the rest of the ladder finds the server (it waited for the whole
// Dial, every Dial, for as long as the entry lived).
func TestStaleCachedSSEWithIdleStream(t *testing.T) {
	ladder.SetCachedEndpointWait(t.Cleanup, 300*time.Millisecond)
	srv := testservers.StartStreamable(testservers.HTTPOptions{Stateless: true})
	defer srv.Close()
	cache := negotiate.NewCache(time.Minute)
	cache.Store(srv.URL, negotiate.SSE, mcp.EraInitialize)
	res, err := connect(t, srv.URL, ladder.Config{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != negotiate.StreamableHTTP || !res.Report.FromCache || !strings.Contains(res.Report.String(), "stale") {
		t.Fatalf("report %s", res.Report)
	}
	if got, _, _ := cache.Lookup(srv.URL); got != negotiate.StreamableHTTP {
		t.Errorf("cache now says %q", got)
	}
}

func TestCacheTTL(t *testing.T) {
	c := negotiate.NewCache(20 * time.Millisecond)
	c.Store("u", negotiate.SSE, mcp.EraInitialize)
	if v, _, ok := c.Lookup("u"); !ok || v != negotiate.SSE {
		t.Fatal("fresh entry missing")
	}
	time.Sleep(40 * time.Millisecond)
	if _, _, ok := c.Lookup("u"); ok {
		t.Error("expired entry returned")
	}
	var nilCache *negotiate.Cache
	nilCache.Store("u", "x", mcp.EraInitialize) // a nil cache is a no-op, not a panic
	if _, _, ok := nilCache.Lookup("u"); ok {
		t.Error("nil cache returned an entry")
	}
}

func TestHostClientAndHeadersOnEveryRung(t *testing.T) {
	var n atomic.Int32
	var missing atomic.Int32
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404, GETServesLegacy: true,
		OnRequest: func(r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t" {
				missing.Add(1)
			}
		}})
	defer srv.Close()
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	res, err := connect(t, srv.URL, ladder.Config{Common: httpopt.Common{HTTPClient: hc, Header: http.Header{"Authorization": {"Bearer t"}}}})
	if err != nil {
		t.Fatal(err)
	}
	res.Transport.Close()
	if n.Load() < 3 || missing.Load() != 0 {
		t.Errorf("round trips through the host client: %d; requests without the header: %d", n.Load(), missing.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestReportString(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404, GETServesLegacy: true})
	defer srv.Close()
	res, err := connect(t, srv.URL, ladder.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Report.String()
	for _, want := range []string{"streamable-http POST", "→ 404", "sse", "GET", "→ 200", "using sse", "fallback"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "sessionId=") && !strings.Contains(s, "sessionId=…") {
		t.Errorf("the report shows a session id:\n%s", s)
	}
	b, err := json.Marshal(res.Report)
	if err != nil || !strings.Contains(string(b), `"attempts"`) {
		t.Errorf("JSON report %s %v", b, err)
	}
}

func TestOlderServerRefusalIsNotNewer(t *testing.T) {
	// The lifecycle's own example: -32602 listing a revision we speak.
	body := func(req *jsonrpc.Message) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + req.ID.Raw() + `,"error":{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-03-26"]}}}`)
	}
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 400, PostBodyFunc: body})
	defer srv.Close()
	_, err := connect(t, srv.URL, ladder.Config{})
	var ne *negotiate.NewerServerError
	if errors.As(err, &ne) {
		t.Fatalf("a server listing 2025-03-26 is not newer: %v", err)
	}
}

func TestForcedPolicyNotCached(t *testing.T) {
	srv := testservers.StartHybrid(testservers.HybridOptions{SamePath: true})
	defer srv.Close()
	cache := negotiate.NewCache(time.Minute)
	if _, err := connect(t, srv.URL, ladder.Config{Policy: negotiate.SSEOnly, Cache: cache}); err != nil {
		t.Fatal(err)
	}
	if v, _, ok := cache.Lookup(srv.URL); ok {
		t.Errorf("an SSEOnly outcome was cached: %s", v)
	}
}

func TestReportTextKeepsErrorsOnOneLine(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 404, PostBody: "<html>\n<body>\n" + strings.Repeat("x", 600) + "\n</body>", GETStatus: 404})
	defer srv.Close()
	_, err := connect(t, srv.URL, ladder.Config{})
	var ne *negotiate.Error
	if !errors.As(err, &ne) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(ne.Report.String(), "\n") {
		if strings.Contains(line, "<body>") && len(line) > 400 {
			t.Errorf("an attempt's error is not folded and cut: %q", line)
		}
		if strings.TrimSpace(line) == "<body>" {
			t.Error("an attempt's error spans lines")
		}
	}
	if !strings.Contains(ne.Report.Attempts[0].Error, strings.Repeat("x", 100)) {
		t.Error("the JSON form must keep the error whole")
	}
}

// An initialize-era server that answers any request it does not know with 202 and
// no body (or with a page that is not JSON) is no stateless server: the
// ladder goes on to initialize.
func TestProbeAnsweredWithoutJSONRPC(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
	}{
		{"202", func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) }},
		{"html", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>hello</html>"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			legacy := testservers.NewStreamableHandler(testservers.HTTPOptions{NoGETStream: true})
			defer legacy.Close()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "server/discover" {
					tc.answer(w)
					return
				}
				legacy.ServeHTTP(w, r)
			}))
			defer srv.Close()
			res, err := ladder.Connect(context.Background(), srv.URL, dualHello(), ladder.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Transport.Close()
			if res.Era != mcp.EraInitialize || len(res.Report.Attempts) != 2 || !strings.Contains(res.Report.Attempts[0].Decision, "initialize-era") {
				t.Errorf("report %s", res.Report)
			}
		})
	}
}
