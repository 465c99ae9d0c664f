package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/testservers"
)

// TestURLSecretsNotShown: some servers take their credential in the URL
// (a password, or an api key in the query, as a value or a bare
// parameter; a fragment is the host's too). The URL is the host's to use,
// not to show: no error, log line or negotiation report holds those
// values, on any transport, through faults, failed negotiations and calls,
// connections the server drops unanswered (net/http's error for those
// names the request's URL, query included), during Dial and after, and a
// 429 whose wait is over the cap.
func TestURLSecretsNotShown(t *testing.T) {
	const password, apiKey, bareKey, fragment = "pa55-w0rd-in-url", "k3y-in-query-789", "BareSecretKey123", "frag-secret-456"
	withSecrets := func(raw string) string {
		return strings.Replace(raw, "http://", "http://user:"+password+"@", 1) + "?api_key=" + apiKey + "&" + bareKey + "#" + fragment
	}
	var logs logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []client.Option{
		client.WithLogger(logger),
		client.WithDefaultTimeout(10 * time.Second),
		client.WithReconnectPolicy(reconnect.Policy{InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, MaxAttempts: 20}),
	}
	var shown []string // errors and reports

	faults := testservers.RandomFaults(11, 0.2)
	streamable := testservers.StartStreamable(testservers.HTTPOptions{Priming: true, Faults: faults})
	t.Cleanup(streamable.Close)
	modern := testservers.StartStateless(testservers.HTTPOptions{})
	t.Cleanup(modern.Close)
	sse := testservers.StartLegacy(testservers.LegacyOptions{Faults: testservers.RandomFaults(12, 0.1)})
	t.Cleanup(sse.Close)
	for _, s := range []struct{ name, url string }{
		{"streamable", streamable.URL}, {"modern", modern.URL}, {"sse", sse.URL},
	} {
		c := dial(t, server{name: s.name, target: client.URL(withSecrets(s.url))}, opts...)
		report, err := json.Marshal(c.Info().Negotiation)
		if err != nil {
			t.Fatal(err)
		}
		shown = append(shown, string(report), fmt.Sprintf("%+v", *c.Info().Negotiation))
		for range 20 {
			if _, err := c.CallTool(ctxT(t), "echo", map[string]string{"text": "x"}); err != nil {
				shown = append(shown, err.Error())
			}
		}
		if _, err := c.CallTool(ctxT(t), "no-such-tool", nil); err != nil {
			shown = append(shown, err.Error())
		}
	}

	// Dropped connections: the server closes the connection instead of
	// answering, so net/http's error, which names the request's URL with
	// its query, is what the client has to report. On each transport,
	// during Dial and on a call; on Streamable HTTP also the GET stream
	// and the DELETE of Close. Then a tools/call answered 429 with a
	// Retry-After over the cap, which is not waited out.
	for _, d := range []struct {
		name     string
		start    func() (string, func()) // the upstream's URL, and its Close
		policy   negotiate.TransportPolicy
		drop     []string         // the requests the front does not pass on (see faultFront)
		fault    http.HandlerFunc // what it does instead; nil drops the connection
		dialErr  bool             // Dial fails; otherwise a tools/call does
		closeErr bool             // Close fails too (its DELETE is dropped)
		listens  bool             // the host listens: the GET stream opens, and its failure is logged
		named    string           // what the errors name, redacted
	}{
		{name: "streamable initialize", start: startStreamable, drop: []string{"initialize"}, dialErr: true, named: "api_key=…"},
		{name: "stateless server/discover", start: startStateless, drop: []string{"server/discover"}, dialErr: true, named: "api_key=…"},
		{name: "sse GET", start: startSSE, policy: negotiate.SSEOnly, drop: []string{"GET"}, dialErr: true, named: "api_key=…"},
		{name: "sse initialize", start: startSSE, policy: negotiate.SSEOnly, drop: []string{"initialize"}, dialErr: true, named: "sessionId=…"},
		{name: "streamable tools/call, GET stream, DELETE", start: startStreamable, drop: []string{"tools/call", "GET", "DELETE"}, closeErr: true, listens: true, named: "api_key=…"},
		{name: "streamable resuming GET", start: startStreamableCut, drop: []string{"GET"}, named: "api_key=…"},
		{name: "stateless tools/call", start: startStateless, drop: []string{"tools/call"}, named: "api_key=…"},
		{name: "sse tools/call", start: startSSE, policy: negotiate.SSEOnly, drop: []string{"tools/call"}, named: "sessionId=…"},
		{name: "streamable 429", start: startStreamable, drop: []string{"tools/call"}, fault: tooManyRequests, named: "api_key=…&…"},
		{name: "sse 429", start: startSSE, policy: negotiate.SSEOnly, drop: []string{"tools/call"}, fault: tooManyRequests, named: "sessionId=…"},
	} {
		upstream, stop := d.start()
		t.Cleanup(stop)
		fault := d.fault
		if fault == nil {
			fault = dropConnection
		}
		front, dropped := faultFront(t, upstream, fault, d.drop...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		dopts := append(slices.Clone(opts), client.WithTransportPolicy(d.policy))
		getLogged := make(chan struct{})
		if d.listens {
			// A failed GET stream is retried, and each retry logged
			// with the failure: the first such line is awaited.
			h := &notifyHandler{Handler: logger.Handler(), msg: "modern: reconnecting the GET stream", seen: getLogged, once: new(sync.Once)}
			dopts = append(dopts, client.WithLogger(slog.New(h)), client.OnLog(func(mcp.LoggingMessageParams) {}))
		}
		c, err := client.Dial(ctx, client.URL(withSecrets(front)), dopts...)
		var got []string // this case's errors and reports
		switch {
		case d.dialErr && err == nil:
			c.Close()
			t.Errorf("%s: Dial succeeded", d.name)
		case d.dialErr:
			got = append(got, err.Error())
			if ne, ok := errors.AsType[*negotiate.Error](err); !ok || ne.Report == nil {
				t.Errorf("%s: the Dial error has no report: %v", d.name, err)
			} else {
				got = append(got, ne.Report.String())
			}
		case err != nil:
			t.Errorf("%s: Dial: %v", d.name, err)
		default:
			got = append(got, c.Info().Negotiation.String())
			if _, err := c.CallTool(ctx, "echo", map[string]string{"text": "x"}); err == nil {
				t.Errorf("%s: a tools/call whose connection was dropped succeeded", d.name)
			} else {
				got = append(got, err.Error())
			}
			if d.listens {
				select {
				case <-getLogged:
				case <-ctx.Done():
					t.Errorf("%s: the failed GET stream was not logged", d.name)
				}
			}
			if err := c.Close(); err != nil {
				got = append(got, err.Error())
			} else if d.closeErr {
				t.Errorf("%s: Close succeeded, its DELETE dropped", d.name)
			}
		}
		cancel()
		if dropped.Load() == 0 {
			t.Errorf("%s: no request met its fault", d.name)
		}
		if !strings.Contains(strings.Join(got, "\n"), d.named) {
			t.Errorf("%s: no error names the URL (%s): %q", d.name, d.named, got)
		}
		shown = append(shown, got...)
	}

	// A stateless server that takes initialize and refuses what follows, dialed
	// as initialize-era (a cache says so): the client logs that it tries the stateless
	// request, naming the URL.
	sdkLike := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{StatelessInitialize: testservers.InitializeLikeGoSDK}})
	t.Cleanup(sdkLike.Close)
	cache := negotiate.NewCache(time.Minute)
	cache.Store(withSecrets(sdkLike.URL), client.TransportStreamableHTTP, mcp.EraInitialize)
	c := dial(t, server{name: "modern after initialize", target: client.URL(withSecrets(sdkLike.URL))}, append(slices.Clone(opts), client.WithCache(cache))...)
	if c.Info().Era != mcp.EraStateless {
		t.Errorf("modern after initialize: era %s", c.Info().Era)
	}
	if !strings.Contains(logs.String(), "trying the stateless request") {
		t.Error("modern after initialize: the retry is not logged")
	}
	shown = append(shown, c.Info().Negotiation.String())

	// URLs refused before anything is sent: not http(s), or not parsed.
	for _, bad := range []string{
		"ftp://user:" + password + "@127.0.0.1/mcp?api_key=" + apiKey + "&" + bareKey + "#" + fragment,
		"http://user:" + password + "@127.0.0.1:port/mcp?api_key=" + apiKey + "&" + bareKey + "#" + fragment,
	} {
		if c, err := client.Dial(ctxT(t), client.URL(bad), opts...); err == nil {
			c.Close()
			t.Errorf("Dial(%q) succeeded", bad)
		} else {
			shown = append(shown, err.Error())
		}
	}

	// A URL where nothing answers: every rung of the ladder fails, and the
	// error names each attempt.
	nothing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(nothing.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := client.Dial(ctx, client.URL(withSecrets(nothing.URL+"/mcp")), opts...); err == nil {
		c.Close()
		t.Fatal("Dial to a server that answers 404 to everything succeeded")
	} else {
		shown = append(shown, err.Error())
	}

	text := logs.String()
	if len(streamable.Server().Stats().Faults) == 0 || !strings.Contains(text, "level=DEBUG") || len(shown) < 8 {
		t.Fatalf("nothing to check: %d faults, %d bytes of logs, %d errors and reports",
			len(streamable.Server().Stats().Faults), len(text), len(shown))
	}
	if !strings.Contains(strings.Join(shown, "\n"), "api_key=") {
		t.Errorf("no error or report names the URL's query at all: %q", shown)
	}
	// The session id of an HTTP+SSE server is in its endpoint's query: only
	// its redacted form may be shown.
	for _, s := range append(shown, text) {
		if m := rawSessionID.FindString(s); m != "" {
			i := strings.Index(s, m)
			t.Errorf("a session id is shown: …%s…", s[max(0, i-200):min(len(s), i+50)])
		}
	}
	for _, secret := range []string{password, apiKey, bareKey, fragment} {
		if strings.Contains(text, secret) {
			i := strings.Index(text, secret)
			t.Errorf("the logs hold %q: …%s…", secret, text[max(0, i-200):min(len(text), i+50)])
		}
		for _, s := range shown {
			if strings.Contains(s, secret) {
				t.Errorf("an error or report holds %q: %s", secret, s)
			}
		}
	}
}

// rawSessionID matches a session id in a URL's query, unredacted.
var rawSessionID = regexp.MustCompile(`sessionId=[^…&"\s]`)

func startStreamable() (string, func()) {
	s := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
	return s.URL, s.Close
}

// startStreamableCut starts a Streamable HTTP server that cuts the
// stream answering the first tools/call, which the client then resumes.
func startStreamableCut() (string, func()) {
	s := testservers.StartStreamable(testservers.HTTPOptions{Priming: true, Faults: testservers.Faults{Rules: []testservers.FaultRule{
		{Fault: testservers.FaultDropStream, Method: "tools/call", Count: 1},
	}}})
	return s.URL, s.Close
}

func startStateless() (string, func()) {
	s := testservers.StartStateless(testservers.HTTPOptions{})
	return s.URL, s.Close
}

func startSSE() (string, func()) {
	s := testservers.StartLegacy(testservers.LegacyOptions{})
	return s.URL, s.Close
}

// faultFront starts a proxy to the server at upstream that does not pass
// on the requests it is told to catch — "GET", "DELETE", or the name of a
// JSON-RPC method, for the POSTs that carry it — but answers them with
// fault. It returns the proxy's URL, with upstream's path, and the count
// of the requests caught.
func faultFront(t *testing.T, upstream string, fault http.HandlerFunc, catch ...string) (string, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
	}}
	caught := new(atomic.Int64)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		for _, c := range catch {
			if c == r.Method || r.Method == http.MethodPost && bytes.Contains(body, []byte(`"method":"`+c+`"`)) {
				caught.Add(1)
				fault(w, r)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL + target.Path, caught
}

// dropConnection closes the request's connection: no answer at all.
func dropConnection(w http.ResponseWriter, _ *http.Request) {
	if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
		c.Close()
	}
}

// tooManyRequests answers 429 with a wait over any cap.
func tooManyRequests(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Retry-After", "3600")
	w.WriteHeader(http.StatusTooManyRequests)
}

// notifyHandler passes records on to Handler, and closes seen at the
// first whose message is msg.
type notifyHandler struct {
	slog.Handler
	msg  string
	seen chan struct{}
	once *sync.Once
}

func (h *notifyHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return h.Handler.Handle(ctx, r)
}

func (h *notifyHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.Handler = h.Handler.WithAttrs(attrs)
	return &c
}

func (h *notifyHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.Handler = h.Handler.WithGroup(name)
	return &c
}
