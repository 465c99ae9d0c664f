package testservers

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/mcp"
)

// drain reads events until the stream ends, and returns them with how
// it ended (io.EOF for a clean end).
func drain(events *sseReader) ([]sseEvent, error) {
	var out []sseEvent
	for {
		ev, err := events.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// messagesOf returns the methods (or "response <id>") of the events that
// carry a message.
func messagesOf(t *testing.T, evs []sseEvent) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.data == "" {
			continue
		}
		m := mustDecode(t, ev.data)
		if m.IsResponse() {
			out = append(out, "response "+m.ID.Raw())
		} else {
			out = append(out, m.Method)
		}
	}
	return out
}

// wantIDs checks that the message events all have ids of one stream,
// numbered on from after.
func wantIDs(t *testing.T, evs []sseEvent, after string) {
	t.Helper()
	stream, seq, ok := parseEventID(after)
	if !ok {
		t.Fatalf("bad event id %q", after)
	}
	for _, ev := range evs {
		if ev.data == "" {
			continue
		}
		seq++
		if want := fmt.Sprintf("%s-%d", stream, seq); !ev.hasID || ev.id != want {
			t.Errorf("event id %q (has %v), want %q", ev.id, ev.hasID, want)
		}
	}
}

func lastEvent(evs []sseEvent) string {
	id := ""
	for _, ev := range evs {
		if ev.hasID {
			id = ev.id
		}
	}
	return id
}

func lastEventHdr(id string) map[string]string { return map[string]string{"Last-Event-ID": id} }

func faultRules(rules ...FaultRule) Faults { return Faults{Rules: rules} }

func TestFaultResumePOSTStream(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true, Faults: faultRules(
		FaultRule{Fault: FaultDropStream, Method: "tools/call", AfterEvents: 2, Count: 1, Retry: 30 * time.Millisecond})})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(5, "tools/call", `{"name":"slow","arguments":{"steps":5,"delayMs":20},"_meta":{"progressToken":"p"}}`), nil)
	evs, err := drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if err != io.EOF {
		t.Fatalf("cut stream ended with %v", err)
	}
	if len(evs) != 4 || evs[0].data != "" || !evs[0].hasID || evs[3].retry != "30" || evs[3].data != "" {
		t.Fatalf("cut stream: %+v", evs)
	}
	if got := messagesOf(t, evs); !slices.Equal(got, []string{"notifications/progress", "notifications/progress"}) {
		t.Fatalf("before the cut: %v", got)
	}
	wantIDs(t, evs[1:3], evs[0].id)

	last := evs[2].id
	get := w.do(t, http.MethodGet, "", lastEventHdr(last))
	if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("resuming GET: %d %q", get.StatusCode, get.Header.Get("Content-Type"))
	}
	rest, err := drain(newSSEReader(get.Body))
	get.Body.Close()
	if err != io.EOF {
		t.Fatalf("resumed stream ended with %v", err)
	}
	want := []string{"notifications/progress", "notifications/progress", "notifications/progress", "response 5"}
	if got := messagesOf(t, rest); !slices.Equal(got, want) || len(rest) != len(want) {
		t.Fatalf("resumed: %v (%d events), want exactly %v", got, len(rest), want)
	}
	wantIDs(t, rest, last)
	if text, _ := toolText(t, mustDecode(t, rest[3].data)); text != "done 5 steps" {
		t.Errorf("response %q", text)
	}
	st := s.Server().Stats()
	if st.Resumed != 1 || st.Faults["drop-stream"] != 1 || st.ToolCalls["slow"] != 1 {
		t.Errorf("stats: resumed %d, faults %v, tool calls %v", st.Resumed, st.Faults, st.ToolCalls)
	}
	// Delivered, the stream is forgotten.
	if code, body := status(t, w, http.MethodGet, "", lastEventHdr(last)); code != http.StatusBadRequest {
		t.Errorf("resuming a delivered stream: %d %s", code, body)
	}
}

func TestFaultResumeFinishedStream(t *testing.T) {
	// Cut right after the priming event: the response comes while no
	// connection carries the stream, and is kept for the resumption.
	s, w := startHTTP(t, HTTPOptions{Priming: true, Faults: faultRules(
		FaultRule{Fault: FaultDropStream, Method: "tools/call", Count: 1})})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(7, "tools/call", `{"name":"once","arguments":{"key":"k"}}`), nil)
	evs, _ := drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if len(evs) != 1 || evs[0].data != "" || !evs[0].hasID {
		t.Fatalf("cut stream: %+v", evs)
	}
	// Resume once the response is kept: the stream has ended, with no
	// connection to carry it (a GET before that would get it live).
	select {
	case <-streamEnded(t, s, w.session, evs[0].id):
	case <-time.After(testTimeout):
		t.Fatal("the cut stream's response was never written")
	}
	get := w.do(t, http.MethodGet, "", lastEventHdr(evs[0].id))
	rest, err := drain(newSSEReader(get.Body))
	get.Body.Close()
	if got := messagesOf(t, rest); err != io.EOF || !slices.Equal(got, []string{"response 7"}) {
		t.Fatalf("resumed: %v, %v", got, err)
	}
	wantIDs(t, rest, evs[0].id)
	if st := s.Server().Stats(); st.Executions != 1 || st.Duplicates != 0 {
		t.Errorf("executions %d, duplicates %d", st.Executions, st.Duplicates)
	}
}

func TestFaultResumeGETStream(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true, Faults: faultRules(
		FaultRule{Fault: FaultDropGET, AfterEvents: 1, Count: 1, Retry: 20 * time.Millisecond})})
	w.initialize(t)
	get := w.do(t, http.MethodGet, "", nil)
	events := newSSEReader(get.Body)
	prime, err := events.next()
	if err != nil || !prime.hasID || prime.data != "" {
		t.Fatalf("priming %+v %v", prime, err)
	}
	s.Server().NotifyListChanged() // one event goes out, then the cut
	evs, err := drain(events)
	get.Body.Close()
	if err != io.EOF || len(evs) != 2 || evs[1].retry != "20" {
		t.Fatalf("cut GET stream: %+v %v", evs, err)
	}
	if got := messagesOf(t, evs); !slices.Equal(got, listChangedMethods[:1]) {
		t.Fatalf("before the cut: %v", got)
	}
	wantIDs(t, evs[:1], prime.id)

	get = w.do(t, http.MethodGet, "", lastEventHdr(evs[0].id))
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("resuming GET: %d", get.StatusCode)
	}
	events = newSSEReader(get.Body)
	var rest []sseEvent
	for len(rest) < 2 {
		ev, err := events.next()
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, ev)
	}
	if got := messagesOf(t, rest); !slices.Equal(got, listChangedMethods[1:]) {
		t.Fatalf("replayed: %v", got)
	}
	// Then it goes on live.
	s.Server().NotifyListChanged()
	for range 3 {
		ev, err := events.next()
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, ev)
	}
	wantIDs(t, rest, evs[0].id)
	if got := messagesOf(t, rest[2:]); !slices.Equal(got, listChangedMethods) {
		t.Errorf("live after the replay: %v", got)
	}
	// The resumed stream is the session's GET stream.
	if code, _ := status(t, w, http.MethodGet, "", nil); code != http.StatusConflict {
		t.Errorf("second GET: %d", code)
	}
	if st := s.Server().Stats(); st.Resumed != 1 || st.Faults["drop-get"] != 1 {
		t.Errorf("resumed %d, faults %v", st.Resumed, st.Faults)
	}
}

func TestFaultDropWithoutIDs(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true, Faults: faultRules(
		FaultRule{Fault: FaultDropStreamNoIDs, Method: "tools/call", AfterEvents: 1, Count: 1})})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(3, "tools/call", `{"name":"slow","arguments":{"steps":3,"delayMs":10},"_meta":{"progressToken":1}}`), nil)
	evs, err := drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if err != io.ErrUnexpectedEOF || len(evs) != 1 || evs[0].hasID || mustDecode(t, evs[0].data).Method != "notifications/progress" {
		t.Fatalf("stream without ids: %+v %v", evs, err)
	}
	// Nothing can resume it: its events had no ids.
	for _, id := range []string{"2-0", "2-1", "junk", "9-1"} {
		if code, _ := status(t, w, http.MethodGet, "", lastEventHdr(id)); code != http.StatusBadRequest {
			t.Errorf("Last-Event-ID %q: %d, want 400", id, code)
		}
	}
	// The tool ran all the same; later streams have ids again.
	testkit.Eventually(t, testTimeout, "the tool's end", func() bool { return s.Server().Stats().Faults["drop-stream-no-ids"] == 1 })
	resp = w.do(t, http.MethodPost, reqJSON(4, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`), nil)
	evs, _ = drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if got := messagesOf(t, evs); !slices.Equal(got, []string{"response 4"}) || !evs[0].hasID || !evs[1].hasID {
		t.Errorf("next call: %+v", evs)
	}
	if st := s.Server().Stats(); st.ToolCalls["slow"] != 1 || st.Resumed != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestFaultDropStreamsOnDemand(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true})
	w.initialize(t)
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	post := w.do(t, http.MethodPost, reqJSON(2, "tools/call", `{"name":"slow","arguments":{"steps":3,"delayMs":30}}`), nil)
	defer post.Body.Close()
	gev, pev := newSSEReader(get.Body), newSSEReader(post.Body)
	gprime, _ := gev.next()
	pprime, _ := pev.next()
	// The initialize answer's stream lets go of its connection when its
	// handler returns, which may be after the client has read the answer.
	testkit.Eventually(t, testTimeout, "only the GET and the tools/call streams to be carried", func() bool { return carried(s) == 2 })
	if n := s.DropStreams(250 * time.Millisecond); n != 2 {
		t.Errorf("DropStreams cut %d streams, want 2", n)
	}
	for _, r := range []*sseReader{gev, pev} {
		evs, err := drain(r)
		if err != io.EOF || len(evs) != 1 || evs[0].retry != "250" {
			t.Errorf("after DropStreams: %+v %v", evs, err)
		}
	}
	resp := w.do(t, http.MethodGet, "", lastEventHdr(pprime.id))
	rest, _ := drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if got := messagesOf(t, rest); !slices.Equal(got, []string{"response 2"}) {
		t.Errorf("resumed POST stream: %v", got)
	}
	resp = w.do(t, http.MethodGet, "", lastEventHdr(gprime.id))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("resumed GET stream: %d", resp.StatusCode)
	}
	if st := s.Server().Stats(); st.Faults["drop-get"] != 1 || st.Faults["drop-stream"] != 1 {
		t.Errorf("faults %v", st.Faults)
	}
}

func TestFaultDropGETFromPOST(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Faults: faultRules(
		FaultRule{Fault: FaultDropGET, Method: "tools/call", Count: 1, Retry: 100 * time.Millisecond})})
	w.initialize(t)
	// No GET stream open: the rule does not apply yet.
	if m, _ := w.request(t, 1, "tools/call", `{"name":"echo","arguments":{"text":"a"}}`); m.Error != nil {
		t.Fatal(m.Error)
	}
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	events := newSSEReader(get.Body)
	testkit.Eventually(t, testTimeout, "the GET stream", func() bool { return s.Handler().sessionFor(w.session).getOpen() })
	if m, _ := w.request(t, 2, "tools/call", `{"name":"echo","arguments":{"text":"b"}}`); m.Error != nil {
		t.Fatal(m.Error)
	}
	evs, err := drain(events)
	if err != io.EOF || len(evs) != 1 || evs[0].retry != "100" {
		t.Errorf("GET stream after the POST: %+v %v", evs, err)
	}
	if n := s.Server().Stats().Faults["drop-get"]; n != 1 {
		t.Errorf("drop-get counted %d times", n)
	}
}

func TestFaultJSONResponseDrop(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{JSONResponse: true, Faults: faultRules(
		FaultRule{Fault: FaultDropStream, Method: "tools/call", Count: 1})})
	w.initialize(t)
	req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(reqJSON(1, "tools/call", `{"name":"counter"}`)))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSessionID, w.session)
	resp, err := w.hc.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatalf("the connection was answered: %d", resp.StatusCode)
	}
	if st := s.Server().Stats(); st.Counter != 1 || st.Faults["drop-stream"] != 1 {
		t.Errorf("the request did not run, or the fault was not counted: counter %d, faults %v", st.Counter, st.Faults)
	}
	if m, _ := w.request(t, 2, "tools/call", `{"name":"counter"}`); m.Error != nil {
		t.Error(m.Error)
	}
}

func TestFaultResumeRefusals(t *testing.T) {
	_, w := startHTTP(t, HTTPOptions{Priming: true})
	w.initialize(t)
	for _, id := range []string{"x", "-1", "1-", "1-x", "1--2", "999-0"} {
		if code, _ := status(t, w, http.MethodGet, "", lastEventHdr(id)); code != http.StatusBadRequest {
			t.Errorf("Last-Event-ID %q: %d, want 400", id, code)
		}
	}
	// Without Priming there are no ids: the header is ignored.
	_, w = startHTTP(t, HTTPOptions{})
	w.initialize(t)
	resp := w.do(t, http.MethodGet, "", lastEventHdr("1-1"))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET with Last-Event-ID without Priming: %d", resp.StatusCode)
	}
}

func TestFaultExpireAfterRequests(t *testing.T) {
	s := StartStreamable(HTTPOptions{Faults: faultRules(
		FaultRule{Fault: FaultExpireSession, Skip: 2, Count: 1, PerSession: true})})
	t.Cleanup(s.Close)
	for range 2 {
		w := newHTTPWire(t, s.URL)
		w.initialize(t)
		for i := range 2 {
			if m, _ := w.request(t, i, "ping", ""); m.Error != nil {
				t.Fatal(m.Error)
			}
		}
		code, body := status(t, w, http.MethodPost, reqJSON(3, "ping", ""), nil)
		if code != http.StatusNotFound || !strings.Contains(body, fmt.Sprint(CodeSessionNotFound)) {
			t.Fatalf("third request: %d %s", code, body)
		}
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			if code, _ := status(t, w, method, reqJSON(4, "ping", ""), nil); code != http.StatusNotFound {
				t.Errorf("%s after the expiry: %d", method, code)
			}
		}
	}
	st := s.Server().Stats()
	if st.SessionsExpired != 2 || st.SessionsCreated != 2 || st.Faults["expire-session"] != 2 || st.Requests["ping"] != 4 || st.Sessions != 0 {
		t.Errorf("stats: expired %d, created %d, faults %v, pings run %d, open %d",
			st.SessionsExpired, st.SessionsCreated, st.Faults, st.Requests["ping"], st.Sessions)
	}
}

func TestFaultExpireOnDemand(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true})
	w.initialize(t)
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	if !s.ExpireSession(w.session) || s.ExpireSession(w.session) || s.ExpireSession("nope") {
		t.Error("ExpireSession results")
	}
	if _, err := io.ReadAll(get.Body); err != nil {
		t.Errorf("GET stream after the expiry: %v", err)
	}
	if code, _ := status(t, w, http.MethodPost, reqJSON(1, "ping", ""), nil); code != http.StatusNotFound {
		t.Errorf("after ExpireSession: %d", code)
	}
	a, b := newHTTPWire(t, s.URL), newHTTPWire(t, s.URL)
	a.initialize(t)
	b.initialize(t)
	if n := s.ExpireAll(); n != 2 {
		t.Errorf("ExpireAll: %d", n)
	}
	for _, w := range []*httpWire{a, b} {
		if code, _ := status(t, w, http.MethodPost, reqJSON(1, "ping", ""), nil); code != http.StatusNotFound {
			t.Errorf("after ExpireAll: %d", code)
		}
	}
	if st := s.Server().Stats(); st.SessionsExpired != 3 || st.Faults["expire-session"] != 3 {
		t.Errorf("expired %d, faults %v", st.SessionsExpired, st.Faults)
	}
}

func TestFaultRejections(t *testing.T) {
	for _, tt := range []struct {
		rule       FaultRule
		status     int
		retryAfter string
	}{
		{FaultRule{Fault: FaultTooManyRequests, RetryAfter: "2"}, http.StatusTooManyRequests, "2"},
		{FaultRule{Fault: FaultUnavailable, RetryAfter: "0"}, http.StatusServiceUnavailable, "0"},
		{FaultRule{Fault: FaultUnavailable}, http.StatusServiceUnavailable, ""},
		{FaultRule{Fault: FaultTooManyRequests, RetryAfter: "Fri, 31 Dec 1999 23:59:59 GMT"}, http.StatusTooManyRequests, "Fri, 31 Dec 1999 23:59:59 GMT"},
	} {
		t.Run(fmt.Sprint(tt.status, tt.retryAfter), func(t *testing.T) {
			tt.rule.Method, tt.rule.Count = "tools/call", 2
			s, w := startHTTP(t, HTTPOptions{Faults: faultRules(tt.rule)})
			w.initialize(t)
			for range 2 {
				resp := w.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"counter"}`), nil)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				ra, hasRA := resp.Header["Retry-After"]
				if resp.StatusCode != tt.status || (tt.retryAfter == "") == hasRA || (hasRA && ra[0] != tt.retryAfter) {
					t.Fatalf("answer %d, Retry-After %q", resp.StatusCode, ra)
				}
				wantErrorCode(t, mustDecode(t, string(body)), CodeRejected)
			}
			// The core never saw them.
			st := s.Server().Stats()
			if st.ToolCalls["counter"] != 0 || st.Requests["tools/call"] != 0 || st.Rejected != 2 || st.Faults[string(tt.rule.Fault)] != 2 {
				t.Errorf("stats: tool calls %v, requests %v, rejected %d, faults %v", st.ToolCalls, st.Requests, st.Rejected, st.Faults)
			}
			// Count spent, the next one runs; other methods were never hit.
			if m, _ := w.request(t, 2, "tools/call", `{"name":"counter"}`); m.Error != nil {
				t.Fatal(m.Error)
			} else if text, _ := toolText(t, m); text != "1" {
				t.Errorf("counter %q", text)
			}
		})
	}
}

func TestFaultRetryAfterDate(t *testing.T) {
	_, w := startHTTP(t, HTTPOptions{Faults: faultRules(
		FaultRule{Fault: FaultUnavailable, Count: 1, RetryAfterDate: 2 * time.Second})})
	w.initialize(t)
	before := time.Now()
	resp := w.do(t, http.MethodPost, reqJSON(1, "ping", ""), nil)
	resp.Body.Close()
	after := time.Now()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d", resp.StatusCode)
	}
	at, err := http.ParseTime(resp.Header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("Retry-After %q: %v", resp.Header.Get("Retry-After"), err)
	}
	if at.Before(before.Add(2*time.Second).Truncate(time.Second)) || !at.Before(after.Add(3*time.Second)) {
		t.Errorf("Retry-After %v, sent between %v and %v", at, before, after)
	}
}

func TestFaultInitializeRejected(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Faults: faultRules(
		FaultRule{Fault: FaultTooManyRequests, Count: 1, RetryAfter: "1"},                           // not initialize
		FaultRule{Fault: FaultUnavailable, Method: "initialize", Count: 1},                          // initialize
		FaultRule{Fault: FaultExpireSession, Method: "initialize", Count: 1},                        // never: no session yet
		FaultRule{Fault: FaultDropStream, Method: "initialize", Count: 1, AfterEvents: 0, Retry: 1}, // never
	)})
	if code, _ := status(t, w, http.MethodPost, reqJSON(0, "initialize", initParams), nil); code != http.StatusServiceUnavailable {
		t.Fatalf("first initialize: %d", code)
	}
	if st := s.Server().Stats(); st.SessionsCreated != 0 || st.Initializations != 0 {
		t.Errorf("a rejected initialize made a session: %+v", st)
	}
	w.initialize(t)
	if code, _ := status(t, w, http.MethodPost, reqJSON(1, "ping", ""), nil); code != http.StatusTooManyRequests {
		t.Errorf("first ping: %d", code)
	}
	if st := s.Server().Stats(); st.Faults["503"] != 1 || st.Faults["429"] != 1 || len(st.Faults) != 2 {
		t.Errorf("faults %v", st.Faults)
	}
}

func TestFaultRestart(t *testing.T) {
	s, a := startHTTP(t, HTTPOptions{Priming: true})
	b := newHTTPWire(t, s.URL)
	a.initialize(t)
	b.initialize(t)
	get := a.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	post := b.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":10}}`), nil)
	defer post.Body.Close()
	prime, _ := newSSEReader(post.Body).next()
	s.Restart()
	for _, r := range []*http.Response{get, post} {
		_, _ = io.ReadAll(r.Body) // ends
	}
	for _, w := range []*httpWire{a, b} {
		if code, _ := status(t, w, http.MethodPost, reqJSON(2, "ping", ""), nil); code != http.StatusNotFound {
			t.Errorf("old session after Restart: %d", code)
		}
	}
	if code, _ := status(t, b, http.MethodGet, "", lastEventHdr(prime.id)); code != http.StatusNotFound {
		t.Errorf("resuming a stream of a lost session: %d", code)
	}
	st := s.Server().Stats()
	if st.SessionsExpired != 2 || st.Faults["restart"] != 1 || st.Sessions != 0 {
		t.Errorf("after Restart: expired %d, faults %v, open %d", st.SessionsExpired, st.Faults, st.Sessions)
	}
	// Clients start over.
	a.session, a.version = "", ""
	a.initialize(t)
	if m, _ := a.request(t, 3, "ping", ""); m.Error != nil {
		t.Error(m.Error)
	}

	// As a rule: the second tools/call restarts the server.
	s, a = startHTTP(t, HTTPOptions{Faults: faultRules(FaultRule{Fault: FaultRestart, Method: "tools/call", Skip: 1, Count: 1})})
	b = newHTTPWire(t, s.URL)
	a.initialize(t)
	b.initialize(t)
	a.request(t, 1, "tools/call", `{"name":"counter"}`)
	if code, _ := status(t, a, http.MethodPost, reqJSON(2, "tools/call", `{"name":"counter"}`), nil); code != http.StatusNotFound {
		t.Errorf("the restarting request: %d", code)
	}
	if code, _ := status(t, b, http.MethodPost, reqJSON(1, "ping", ""), nil); code != http.StatusNotFound {
		t.Errorf("the other session: %d", code)
	}
	if st := s.Server().Stats(); st.Counter != 1 || st.SessionsExpired != 2 {
		t.Errorf("counter %d, expired %d", st.Counter, st.SessionsExpired)
	}
}

func TestFaultRestartStateless(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Stateless: true, Faults: faultRules(FaultRule{Fault: FaultExpireSession})})
	w.request(t, 1, "initialize", initParams)
	s.Restart()
	// No session to lose: the server goes on, and expiry never fires.
	if m, _ := w.request(t, 2, "tools/call", `{"name":"counter"}`); m.Error != nil {
		t.Error(m.Error)
	}
	if st := s.Server().Stats(); st.Faults["restart"] != 1 || st.Faults["expire-session"] != 0 || st.Sessions != 1 {
		t.Errorf("stats %+v", st)
	}
}

// soakLike makes 60 sequential once calls against a server with random
// faults, initializing again after each 404, and returns what each call
// met and the faults counted.
func soakLike(t *testing.T, seed uint64) ([]string, map[string]int) {
	s := StartStreamable(HTTPOptions{Priming: true, Faults: RandomFaults(seed, 0.15)})
	defer s.Close()
	w := newHTTPWire(t, s.URL)
	w.initialize(t)
	var outcomes []string
	for i := range 60 {
		resp := w.do(t, http.MethodPost, reqJSON(i+1, "tools/call", fmt.Sprintf(`{"name":"once","arguments":{"key":"k%d"}}`, i)), nil)
		outcome := fmt.Sprint(resp.StatusCode)
		if resp.StatusCode == http.StatusOK {
			evs, _ := drain(newSSEReader(resp.Body))
			switch msgs := messagesOf(t, evs); {
			case len(msgs) == 1:
				outcome = "ok"
			case len(evs) > 0 && evs[0].hasID:
				outcome = "cut, resumable"
			default:
				outcome = "cut"
			}
		}
		resp.Body.Close()
		outcomes = append(outcomes, outcome)
		if resp.StatusCode == http.StatusNotFound {
			w.session, w.version = "", ""
			w.initialize(t)
		}
	}
	st := s.Server().Stats()
	if st.Duplicates != 0 {
		t.Errorf("duplicates %d", st.Duplicates)
	}
	return outcomes, st.Faults
}

func TestFaultRandomReproducible(t *testing.T) {
	a, fa := soakLike(t, 7)
	b, fb := soakLike(t, 7)
	c, _ := soakLike(t, 8)
	if !slices.Equal(a, b) || !maps.Equal(fa, fb) {
		t.Errorf("same seed, different runs:\n%v %v\n%v %v", a, fa, b, fb)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 gave the same run %v", a)
	}
	kinds := 0
	for _, f := range []Fault{FaultTooManyRequests, FaultUnavailable, FaultExpireSession, FaultDropStream, FaultDropStreamNoIDs} {
		if fa[string(f)] > 0 {
			kinds++
		}
	}
	if kinds < 4 {
		t.Errorf("few kinds of faults fired: %v", fa)
	}
	t.Logf("seed 7: %v", fa)
}

func TestFaultPlan(t *testing.T) {
	call := occasion{methods: []string{"tools/call"}, session: 1}
	ping := occasion{methods: []string{"ping"}, session: 1}
	for _, tt := range []struct {
		name  string
		rules []FaultRule
		occ   []occasion
		want  string // per occasion: the faults that fired, or "-"
	}{
		{"every", []FaultRule{{Fault: FaultUnavailable}}, []occasion{call, ping, call}, "503 503 503"},
		{"count", []FaultRule{{Fault: FaultUnavailable, Count: 2}}, []occasion{call, call, call}, "503 503 -"},
		{"skip", []FaultRule{{Fault: FaultUnavailable, Skip: 2, Count: 1}}, []occasion{call, call, call, call}, "- - 503 -"},
		{"method", []FaultRule{{Fault: FaultUnavailable, Method: "ping"}}, []occasion{call, ping}, "- 503"},
		{"per session", []FaultRule{{Fault: FaultExpireSession, Skip: 1, Count: 1, PerSession: true}},
			[]occasion{call, {methods: []string{"ping"}, session: 2}, call, {methods: []string{"ping"}, session: 2}, call}, "- - expire-session expire-session -"},
		{"first terminal wins", []FaultRule{{Fault: FaultTooManyRequests, Count: 1}, {Fault: FaultUnavailable}, {Fault: FaultDropStream}},
			[]occasion{call, call}, "429 503"},
		{"drops combine", []FaultRule{{Fault: FaultDropStream}, {Fault: FaultDropGET}, {Fault: FaultDropStreamNoIDs}},
			[]occasion{call, {methods: []string{"ping"}, getOpen: true}}, "drop-stream,drop-stream-no-ids drop-get,drop-stream,drop-stream-no-ids"},
		{"GET", []FaultRule{{Fault: FaultUnavailable}, {Fault: FaultDropGET, Method: "ping"}, {Fault: FaultDropGET}},
			[]occasion{{get: true}}, "drop-get"},
		{"initialize", []FaultRule{{Fault: FaultUnavailable}, {Fault: FaultTooManyRequests, Method: "initialize"}},
			[]occasion{{methods: []string{"initialize"}}}, "429"},
		{"legacy", []FaultRule{{Fault: FaultDropStream}, {Fault: FaultDropGET}}, []occasion{{methods: []string{"ping"}, legacy: true, getOpen: true}}, "drop-get"},
		{"stateless", []FaultRule{{Fault: FaultExpireSession}, {Fault: FaultRestart}, {Fault: FaultUnavailable}},
			[]occasion{{methods: []string{"ping"}, sessionless: true}}, "503"},
		{"never", []FaultRule{{Fault: FaultUnavailable, Probability: 1e-12}}, []occasion{call, call}, "- -"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newFaultPlan(Faults{Rules: tt.rules})
			var got []string
			for _, o := range tt.occ {
				var kinds []string
				for _, r := range p.draw(o) {
					kinds = append(kinds, string(r.Fault))
				}
				slices.Sort(kinds)
				if len(kinds) == 0 {
					kinds = []string{"-"}
				}
				got = append(got, strings.Join(kinds, ","))
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("got %q, want %q", g, tt.want)
			}
		})
	}
	// Probabilities: about right, and the same for the same seed.
	fired := func(seed uint64) []bool {
		p := newFaultPlan(Faults{Seed: seed, Rules: []FaultRule{{Fault: FaultUnavailable, Probability: 0.3}}})
		out := make([]bool, 2000)
		for i := range out {
			out[i] = len(p.draw(call)) > 0
		}
		return out
	}
	a, b := fired(1), fired(1)
	if !slices.Equal(a, b) {
		t.Error("same seed, different draws")
	}
	n := 0
	for _, f := range a {
		if f {
			n++
		}
	}
	if n < 500 || n > 700 {
		t.Errorf("probability 0.3 fired %d times in 2000", n)
	}
}

func TestOnceTool(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	for i, key := range []string{"a", "b", "a", "a", "c", "b"} {
		m, _ := w.request(t, i+1, "tools/call", `{"name":"once","arguments":{"key":"`+key+`"}}`)
		if text, isErr := toolText(t, m); isErr || !strings.HasPrefix(text, key+" executed ") {
			t.Errorf("once %s: %q", key, text)
		}
	}
	if m, _ := w.request(t, 9, "tools/call", `{"name":"once","arguments":{}}`); func() bool { _, isErr := toolText(t, m); return !isErr }() {
		t.Error("once without a key ran")
	}
	st := s.Server().Stats()
	if st.Executions != 6 || st.Duplicates != 3 || !slices.Equal(st.DuplicateKeys, []string{"a", "b"}) || st.ToolCalls["once"] != 7 {
		t.Errorf("executions %d, duplicates %d %v, tool calls %d", st.Executions, st.Duplicates, st.DuplicateKeys, st.ToolCalls["once"])
	}

	type listed struct {
		Tools []mcp.Tool `json:"tools"`
	}
	m, _ := w.request(t, 10, "tools/list", "")
	hints := map[string]string{}
	for _, tool := range result[listed](t, m).Tools {
		b, _ := json.Marshal(tool.Annotations)
		hints[tool.Name] = string(b)
	}
	for name, want := range map[string]string{
		"once": `{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false}`,
		"add":  `{"readOnlyHint":true,"idempotentHint":true}`,
		"echo": `{"readOnlyHint":true}`,
	} {
		if hints[name] != want {
			t.Errorf("%s annotations %s, want %s", name, hints[name], want)
		}
	}
	if !slices.Contains(ToolNames(), "once") {
		t.Error("ToolNames lacks once")
	}
}

func TestOnceToolCancelled(t *testing.T) {
	w := newStdioWire(t, t.Context(), Options{})
	w.initialize(t)
	w.send(t, reqJSON(1, "tools/call", `{"name":"once","arguments":{"key":"k","delayMs":100000}}`))
	testkit.Eventually(t, testTimeout, "the execution", func() bool { return w.srv.Stats().Executions == 1 })
	w.send(t, notifJSON("notifications/cancelled", `{"requestId":1}`))
	if m, _ := w.request(t, 2, "ping", ""); m.Error != nil {
		t.Fatal(m.Error)
	}
	if st := w.srv.Stats(); st.Executions != 1 || st.Duplicates != 0 {
		t.Errorf("executions %d duplicates %d", st.Executions, st.Duplicates)
	}
}

// sessionFor returns the open session with this id, for tests.
func (h *StreamableHandler) sessionFor(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs, _ := h.sessions.Get(id)
	return hs
}

func TestFaultStreamsForgotten(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true})
	w.initialize(t)
	for i := range 20 {
		w.request(t, i+1, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)
	}
	hs := s.Handler().sessionFor(w.session)
	testkit.Eventually(t, testTimeout, "delivered streams forgotten", func() bool { return len(hs.openStreams()) == 0 })

	// Streams cut and never resumed are kept, within maxRetained.
	s.Inject(FaultRule{Fault: FaultDropStream, Method: "tools/call"})
	var first, last string
	for i := range maxRetained + 10 {
		resp := w.do(t, http.MethodPost, reqJSON(i+100, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`), nil)
		evs, _ := drain(newSSEReader(resp.Body))
		resp.Body.Close()
		if len(evs) != 1 || !evs[0].hasID {
			t.Fatalf("cut stream %+v", evs)
		}
		if i == 0 {
			first = evs[0].id
		}
		last = evs[0].id
		// Streams are retained as they finish, which is after their
		// client read the cut: wait for this one, so that they are
		// retained (and the oldest dropped) in the order sent.
		id, _, _ := parseEventID(last)
		testkit.Eventually(t, testTimeout, "the cut stream retained", func() bool {
			hs.mu.Lock()
			defer hs.mu.Unlock()
			return len(hs.retained) > 0 && hs.retained[len(hs.retained)-1].stream.id == id
		})
	}
	testkit.Eventually(t, testTimeout, "streams finished", func() bool {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return len(hs.retained) == maxRetained && len(hs.byID) == maxRetained
	})
	if code, _ := status(t, w, http.MethodGet, "", lastEventHdr(first)); code != http.StatusBadRequest {
		t.Errorf("the oldest stream: %d, want 400", code)
	}
	resp := w.do(t, http.MethodGet, "", lastEventHdr(last))
	rest, _ := drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if got := messagesOf(t, rest); len(got) != 1 || !strings.HasPrefix(got[0], "response ") {
		t.Errorf("the newest stream: %v", got)
	}
	hs.mu.Lock()
	n := len(hs.retained)
	hs.mu.Unlock()
	if n != maxRetained-1 {
		t.Errorf("%d streams kept after a resumption, want %d", n, maxRetained-1)
	}
}

func TestFaultExpireLetRun(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true, Faults: faultRules(
		FaultRule{Fault: FaultDropStream, Method: "tools/call", Count: 1},
		FaultRule{Fault: FaultExpireSession, Method: "ping", Count: 1, LetRun: true})})
	w.initialize(t)
	// A call whose stream is cut at once, and a call streaming progress.
	cut := w.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"once","arguments":{"key":"k","delayMs":100}}`), nil)
	cutEvs, _ := drain(newSSEReader(cut.Body))
	cut.Body.Close()
	running := w.do(t, http.MethodPost, reqJSON(2, "tools/call", `{"name":"slow","arguments":{"steps":5,"delayMs":20},"_meta":{"progressToken":"p"}}`), nil)
	defer running.Body.Close()
	events := newSSEReader(running.Body)
	if _, err := events.next(); err != nil { // priming
		t.Fatal(err)
	}

	if code, _ := status(t, w, http.MethodPost, reqJSON(3, "ping", ""), nil); code != http.StatusNotFound {
		t.Fatalf("expiring ping: %d", code)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if code, _ := status(t, w, method, reqJSON(4, "ping", ""), nil); code != http.StatusNotFound {
			t.Errorf("%s after the expiry: %d", method, code)
		}
	}
	// The running call goes on to its answer.
	evs, err := drain(events)
	if got := messagesOf(t, evs); err != io.EOF || len(got) != 6 || got[5] != "response 2" {
		t.Errorf("running call after the expiry: %v %v", got, err)
	}
	// The cut one can still be resumed.
	if len(cutEvs) != 1 {
		t.Fatalf("cut stream %+v", cutEvs)
	}
	resp := w.do(t, http.MethodGet, "", lastEventHdr(cutEvs[0].id))
	rest, _ := drain(newSSEReader(resp.Body))
	resp.Body.Close()
	if got := messagesOf(t, rest); !slices.Equal(got, []string{"response 1"}) {
		t.Errorf("resumed after the expiry: %d %v", resp.StatusCode, got)
	}
	testkit.Eventually(t, testTimeout, "the session's end", func() bool { return s.Server().Stats().Sessions == 0 })
	st := s.Server().Stats()
	if st.SessionsExpired != 1 || st.Faults["expire-session"] != 1 || st.Executions != 1 || st.Requests["ping"] != 0 {
		t.Errorf("expired %d, faults %v, executions %d, pings %d", st.SessionsExpired, st.Faults, st.Executions, st.Requests["ping"])
	}
	// A slow request keeps an expired session draining: Close ends it.
	w.session, w.version = "", ""
	w.initialize(t)
	s.Inject(FaultRule{Fault: FaultExpireSession, Method: "ping", Count: 1, LetRun: true})
	slow := w.do(t, http.MethodPost, reqJSON(5, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":10}}`), nil)
	defer slow.Body.Close()
	if code, _ := status(t, w, http.MethodPost, reqJSON(6, "ping", ""), nil); code != http.StatusNotFound {
		t.Fatalf("expiring ping: %d", code)
	}
	s.Close()
}

// carried counts the streams of s's sessions that a connection carries now.
func carried(s *HTTPServer) int {
	n := 0
	for _, hs := range s.h.live() {
		for _, es := range hs.openStreams() {
			es.mu.Lock()
			if es.conn != nil {
				n++
			}
			es.mu.Unlock()
		}
	}
	return n
}

// streamEnded returns the channel closed once the POST stream that event
// id evID belongs to has its last response written (kept, when no
// connection carries the stream).
func streamEnded(t *testing.T, s *HTTPServer, session, evID string) <-chan struct{} {
	t.Helper()
	hs, ok := s.h.sessions.Get(session)
	if !ok {
		t.Fatalf("no session %q", session)
	}
	id, _, ok := parseEventID(evID)
	st := hs.stream(id)
	if !ok || st == nil {
		t.Fatalf("no stream for event id %q", evID)
	}
	return st.ended
}
