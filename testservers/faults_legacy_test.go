package testservers

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
)

func TestLegacyFaultDropAfterEvents(t *testing.T) {
	s := startLegacy(t, LegacyOptions{Faults: faultRules(
		FaultRule{Fault: FaultDropGET, AfterEvents: 2, Count: 1, Retry: 40 * time.Millisecond})})
	w := dialLegacy(t, s.URL)
	w.initialize(t)                                          // event 1: the initialize response
	if m, _ := w.request(t, 1, "ping", ""); m.Error != nil { // event 2
		t.Fatal(m.Error)
	}
	ev, err := w.events.next()
	if err != nil || ev.retry != "40" || ev.data != "" {
		t.Fatalf("after two events: %+v %v, want retry: 40", ev, err)
	}
	if _, err := w.events.next(); err != io.EOF {
		t.Fatalf("stream not ended: %v", err)
	}
	// The session went with its stream; a new stream is a new session.
	testkit.Eventually(t, testTimeout, "the session's end", func() bool { return s.Server().Stats().Sessions == 0 })
	if code, _ := w.post(t, reqJSON(2, "ping", "")); code != http.StatusNotFound {
		t.Errorf("POST to the old endpoint: %d", code)
	}
	again := dialLegacy(t, s.URL)
	if again.endpoint == w.endpoint {
		t.Errorf("the new stream names the old endpoint %q", w.endpoint)
	}
	again.initialize(t)
	for i := range 3 { // Count spent: no more cuts
		if m, _ := again.request(t, i+1, "ping", ""); m.Error != nil {
			t.Fatal(m.Error)
		}
	}
	if st := s.Server().Stats(); st.Faults["drop-get"] != 1 || st.SessionsCreated != 2 {
		t.Errorf("faults %v, sessions created %d", st.Faults, st.SessionsCreated)
	}
}

func TestLegacyFaultDropAtOnce(t *testing.T) {
	s := startLegacy(t, LegacyOptions{Faults: faultRules(FaultRule{Fault: FaultDropGET, Count: 1})})
	w := dialLegacy(t, s.URL)                                  // the endpoint event, then the cut
	if _, err := w.events.next(); err != io.ErrUnexpectedEOF { // dropped, not ended
		t.Fatalf("stream not cut after its endpoint event: %v", err)
	}
	w = dialLegacy(t, s.URL)
	w.initialize(t)
}

func TestLegacyFaultRequests(t *testing.T) {
	s := startLegacy(t, LegacyOptions{Faults: faultRules(
		FaultRule{Fault: FaultTooManyRequests, Method: "tools/call", Count: 1, RetryAfter: "1"},
		FaultRule{Fault: FaultExpireSession, Method: "tools/call", Skip: 2, Count: 1},
		FaultRule{Fault: FaultDropGET, Method: "ping", Count: 1, AfterEvents: 1},
	)})
	w := dialLegacy(t, s.URL)
	w.initialize(t)
	resp, err := w.hc.Post(w.postURL, "application/json", strings.NewReader(reqJSON(1, "tools/call", `{"name":"counter"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("first call: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if m, _ := w.request(t, 2, "tools/call", `{"name":"counter"}`); m.Error != nil {
		t.Fatal(m.Error)
	}
	if st := s.Server().Stats(); st.Counter != 1 || st.Rejected != 1 {
		t.Errorf("the rejected call ran: counter %d, rejected %d", st.Counter, st.Rejected)
	}
	// The third tools/call expires the session: 404, and the stream ends.
	if code, _ := w.post(t, reqJSON(3, "tools/call", `{"name":"counter"}`)); code != http.StatusNotFound {
		t.Errorf("expiring call: %d", code)
	}
	if _, err := io.ReadAll(w.resp.Body); err != nil {
		t.Errorf("stream after the expiry: %v", err)
	}
	// A ping arms the cut of the stream after one more event: its answer.
	w = dialLegacy(t, s.URL)
	w.initialize(t)
	if m, _ := w.request(t, 4, "ping", ""); m.Error != nil {
		t.Fatal(m.Error)
	}
	if _, err := w.events.next(); err != io.ErrUnexpectedEOF {
		t.Errorf("stream not cut after the ping's answer: %v", err)
	}
	st := s.Server().Stats()
	if st.Counter != 1 || st.SessionsExpired != 1 || st.Faults["429"] != 1 || st.Faults["expire-session"] != 1 || st.Faults["drop-get"] != 1 {
		t.Errorf("counter %d, expired %d, faults %v", st.Counter, st.SessionsExpired, st.Faults)
	}
}

func TestLegacyFaultRestartAndKill(t *testing.T) {
	s := startLegacy(t, LegacyOptions{})
	a, b := dialLegacy(t, s.URL), dialLegacy(t, s.URL)
	a.initialize(t)
	b.initialize(t)
	s.Inject(FaultRule{Fault: FaultRestart, Method: "ping", Count: 1})
	if code, _ := a.post(t, reqJSON(1, "ping", "")); code != http.StatusNotFound {
		t.Errorf("restarting ping: %d", code)
	}
	for _, w := range []*legacyWire{a, b} {
		if _, err := io.ReadAll(w.resp.Body); err != nil {
			t.Errorf("stream after the restart: %v", err)
		}
		if code, _ := w.post(t, reqJSON(2, "ping", "")); code != http.StatusNotFound {
			t.Errorf("old session after the restart: %d", code)
		}
	}
	c := dialLegacy(t, s.URL)
	c.initialize(t)
	s.KillStreams()
	if _, err := io.ReadAll(c.resp.Body); err != nil {
		t.Errorf("stream after KillStreams: %v", err)
	}
	st := s.Server().Stats()
	if st.SessionsExpired != 2 || st.Faults["restart"] != 1 || st.Faults["drop-get"] != 1 {
		t.Errorf("expired %d, faults %v", st.SessionsExpired, st.Faults)
	}
}
