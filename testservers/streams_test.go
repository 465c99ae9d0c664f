package testservers

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers/internal/serve"
)

func TestStreamableCancel(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(9, "tools/call", `{"name":"slow","arguments":{"steps":1000,"delayMs":10},"_meta":{"progressToken":"p"}}`), nil)
	defer resp.Body.Close()
	events := newSSEReader(resp.Body)
	if _, err := events.next(); err != nil { // a first progress: the tool runs
		t.Fatal(err)
	}
	start := time.Now()
	w.send(t, notifJSON("notifications/cancelled", `{"requestId":9,"reason":"user pressed stop"}`))
	for {
		ev, err := events.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m := mustDecode(t, ev.data); m.IsResponse() {
			t.Fatalf("a cancelled request was answered: %s", ev.data)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the stream ended %v after the cancellation", d)
	}
	st := s.Server().Stats()
	if st.Cancelled != 1 || st.LastCancelledID != "9" || st.LastCancelledReason != "user pressed stop" || st.ToolCalls["slow"] != 1 {
		t.Errorf("stats %+v", st)
	}
	// The session goes on.
	if m, _ := w.request(t, 10, "ping", ""); m.Error != nil {
		t.Errorf("ping after cancel: %v", m.Error)
	}
}

func TestStreamableCancelServerRequest(t *testing.T) {
	_, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(4, "tools/call", `{"name":"sample","arguments":{"prompt":"p"}}`), nil)
	defer resp.Body.Close()
	events := newSSEReader(resp.Body)
	ev, err := events.next()
	if err != nil {
		t.Fatal(err)
	}
	sreq := mustDecode(t, ev.data)
	if sreq.Method != "sampling/createMessage" {
		t.Fatalf("got %s", ev.data)
	}
	// Cancelling the tool call abandons the sampling request, and the
	// server says so on the stream.
	w.send(t, notifJSON("notifications/cancelled", `{"requestId":4}`))
	ev, err = events.next()
	if err != nil {
		t.Fatal(err)
	}
	m := mustDecode(t, ev.data)
	var p mcp.CancelledParams
	_ = json.Unmarshal(m.Params, &p)
	if m.Method != "notifications/cancelled" || string(p.RequestID) != sreq.ID.Raw() {
		t.Errorf("after cancel: %s", ev.data)
	}
	if _, err := events.next(); err != io.EOF {
		t.Errorf("stream not ended: %v", err)
	}
}

func TestStreamableGETStream(t *testing.T) {
	t.Run("open", func(t *testing.T) {
		s, w := startHTTP(t, HTTPOptions{Priming: true})
		w.initialize(t)
		get := w.do(t, http.MethodGet, "", nil)
		defer get.Body.Close()
		if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET: %d %q", get.StatusCode, get.Header.Get("Content-Type"))
		}
		events := newSSEReader(get.Body)
		if ev, err := events.next(); err != nil || !ev.hasID || ev.data != "" {
			t.Fatalf("priming event %+v %v", ev, err)
		}
		if code, _ := status(t, w, http.MethodGet, "", nil); code != http.StatusConflict {
			t.Errorf("second GET: %d", code)
		}
		// Notifications outside any request go on the GET stream.
		s.Server().NotifyListChanged()
		w.request(t, 1, "resources/subscribe", `{"uri":"test://items/1"}`)
		if n := s.Server().NotifyResourceUpdated("test://items/1"); n != 1 {
			t.Errorf("NotifyResourceUpdated notified %d sessions", n)
		}
		var got []string
		for len(got) < 4 {
			ev, err := events.next()
			if err != nil {
				t.Fatal(err)
			}
			if !ev.hasID {
				t.Errorf("event without id: %+v", ev)
			}
			got = append(got, mustDecode(t, ev.data).Method)
		}
		want := append(slices.Clone(listChangedMethods), "notifications/resources/updated")
		if !slices.Equal(got, want) {
			t.Errorf("GET stream: %v", got)
		}
		// So does a log unrelated to a request, whatever level was set.
		if n := s.Server().NotifyLog(mcp.LevelDebug, "standalone"); n != 1 {
			t.Errorf("NotifyLog reached %d sessions", n)
		}
		ev, err := events.next()
		if err != nil {
			t.Fatal(err)
		}
		var lp mcp.LoggingMessageParams
		if m := mustDecode(t, ev.data); m.Method != "notifications/message" || json.Unmarshal(m.Params, &lp) != nil || lp.Level != mcp.LevelDebug || string(lp.Data) != `"standalone"` {
			t.Errorf("GET stream after NotifyLog: %s", ev.data)
		}
	})
	t.Run("reopen after close", func(t *testing.T) {
		_, w := startHTTP(t, HTTPOptions{})
		w.initialize(t)
		get := w.do(t, http.MethodGet, "", nil)
		get.Body.Close()
		deadline := time.Now().Add(testTimeout)
		for {
			resp := w.do(t, http.MethodGet, "", nil)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			if resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
				t.Fatalf("GET after the first closed: %d", resp.StatusCode)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	for _, tt := range []struct {
		status, want int
	}{{0, http.StatusMethodNotAllowed}, {http.StatusNotFound, http.StatusNotFound}} {
		s, w := startHTTP(t, HTTPOptions{NoGETStream: true, GETStatus: tt.status})
		w.initialize(t)
		if code, _ := status(t, w, http.MethodGet, "", nil); code != tt.want {
			t.Errorf("NoGETStream GETStatus %d: %d", tt.status, code)
		}
		s.Close()
	}
}

func TestStreamableNotificationsInRequest(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	w.request(t, 1, "resources/subscribe", `{"uri":"`+StaticTextURI+`"}`)
	w.request(t, 2, "logging/setLevel", `{"level":"warning"}`)

	m, others := w.request(t, 3, "tools/call", `{"name":"log","arguments":{"level":"info","message":"quiet"}}`)
	if text, _ := toolText(t, m); text != "filtered" || len(others) != 0 {
		t.Errorf("info under warning: %q %v", text, others)
	}
	m, others = w.request(t, 4, "tools/call", `{"name":"log","arguments":{"level":"error","message":"loud"}}`)
	if text, _ := toolText(t, m); text != "logged" || len(others) != 1 {
		t.Fatalf("error under warning: %q %v", text, others)
	}
	var lp mcp.LoggingMessageParams
	_ = json.Unmarshal(others[0].Params, &lp)
	if others[0].Method != "notifications/message" || lp.Level != mcp.LevelError || string(lp.Data) != `"loud"` || lp.Logger != LoggerName {
		t.Errorf("log notification %s %s", others[0].Method, others[0].Params)
	}

	_, others = w.request(t, 5, "tools/call", `{"name":"notify_changes"}`)
	var methods []string
	for _, o := range others {
		methods = append(methods, o.Method)
	}
	if !slices.Equal(methods, listChangedMethods) {
		t.Errorf("notify_changes: %v", methods)
	}

	m, others = w.request(t, 6, "tools/call", `{"name":"touch","arguments":{"uri":"`+StaticTextURI+`"}}`)
	if text, _ := toolText(t, m); text != "notified" || len(others) != 1 || others[0].Method != "notifications/resources/updated" ||
		string(others[0].Params) != `{"uri":"`+StaticTextURI+`"}` {
		t.Errorf("touch: %q %v", text, others)
	}
	m, others = w.request(t, 7, "tools/call", `{"name":"touch","arguments":{"uri":"`+StaticBlobURI+`"}}`)
	if text, _ := toolText(t, m); text != "not subscribed" || len(others) != 0 {
		t.Errorf("touch unsubscribed: %q %v", text, others)
	}
	if got := s.Server().Stats().Subscriptions; !slices.Equal(got, []string{StaticTextURI}) {
		t.Errorf("subscriptions %v", got)
	}
}

func TestStreamableDelete(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	if code, body := status(t, w, http.MethodDelete, "", nil); code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	// The GET stream ends with the session.
	if _, err := io.ReadAll(get.Body); err != nil {
		t.Errorf("GET stream: %v", err)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if code, _ := status(t, w, method, reqJSON(2, "ping", ""), nil); code != http.StatusNotFound {
			t.Errorf("%s after DELETE: %d", method, code)
		}
	}
	if st := s.Server().Stats(); st.Sessions != 0 || len(s.Handler().SessionIDs()) != 0 {
		t.Errorf("sessions after DELETE: %d", st.Sessions)
	}
	// A new initialize without the id starts over.
	w.session, w.version = "", ""
	w.initialize(t)
	if m, _ := w.request(t, 3, "ping", ""); m.Error != nil {
		t.Error(m.Error)
	}
}

func TestStreamableEndSession(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	resp := w.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":1000,"delayMs":10}}`), nil)
	defer resp.Body.Close()
	if !s.Handler().EndSession(w.session) || s.Handler().EndSession(w.session) {
		t.Error("EndSession result")
	}
	if _, err := io.ReadAll(resp.Body); err != nil { // the POST stream ends too
		t.Error(err)
	}
	if code, _ := status(t, w, http.MethodPost, reqJSON(2, "ping", ""), nil); code != http.StatusNotFound {
		t.Errorf("after EndSession: %d", code)
	}
}

func TestStreamableStateless(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		s, w := startHTTP(t, HTTPOptions{Stateless: true, JSONResponse: jsonMode})
		resp := w.do(t, http.MethodPost, reqJSON(1, "initialize", initParams), nil)
		readAnswer(t, resp, nil)
		resp.Body.Close()
		if id := resp.Header.Get(HeaderSessionID); id != "" {
			t.Errorf("stateless server sent a session id %q", id)
		}
		w.send(t, notifJSON("notifications/initialized", ""))
		// Any client, any version header the server supports.
		w2 := newHTTPWire(t, s.URL)
		w2.version = mcp.Version20250618
		if m, _ := w2.request(t, 2, "tools/call", `{"name":"counter"}`); m.Error != nil {
			t.Error(m.Error)
		}
		if code, _ := status(t, w, http.MethodDelete, "", nil); code != http.StatusMethodNotAllowed {
			t.Errorf("DELETE: %d", code)
		}
		if st := s.Server().Stats(); st.Counter != 1 || st.Sessions != 1 {
			t.Errorf("stats %+v", st)
		}
		s.Close()
	}
}

func TestStreamableBatch(t *testing.T) {
	for _, jsonMode := range []bool{false, true} {
		_, w := startHTTP(t, HTTPOptions{JSONResponse: jsonMode})
		w.initializeWith(t, `{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		if w.version != mcp.Version20250326 {
			t.Fatalf("negotiated %q", w.version)
		}
		w.version = "" // 2025-03-26 clients send no version header
		body := "[" + reqJSON(1, "ping", "") + "," + notifJSON("notifications/roots/list_changed", "") + "," +
			reqJSON(2, "tools/call", `{"name":"echo","arguments":{"text":"b"}}`) + "]"
		resp := w.do(t, http.MethodPost, body, nil)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var raws []string
		if jsonMode {
			var arr []json.RawMessage
			if err := json.Unmarshal(data, &arr); err != nil {
				t.Fatalf("JSON batch answer %s: %v", data, err)
			}
			for _, r := range arr {
				raws = append(raws, string(r))
			}
		} else {
			events := newSSEReader(strings.NewReader(string(data)))
			for {
				ev, err := events.next()
				if err != nil {
					break
				}
				raws = append(raws, ev.data)
			}
		}
		ids := map[string]bool{}
		for _, r := range raws {
			ids[mustDecode(t, r).ID.Raw()] = true
		}
		if len(raws) != 2 || !ids["1"] || !ids["2"] {
			t.Errorf("json=%v batch answers: %v", jsonMode, raws)
		}
		// Only notifications: 202.
		w.send(t, "["+notifJSON("notifications/roots/list_changed", "")+"]")
	}
}

func TestStreamableFailedInitialize(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	resp := w.do(t, http.MethodPost, reqJSON(1, "initialize", `{"capabilities":{}}`), nil)
	defer resp.Body.Close()
	m, _ := readAnswer(t, resp, nil)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	if ids := s.Handler().SessionIDs(); len(ids) != 0 {
		t.Errorf("a failed initialize left sessions %v", ids)
	}
}

func TestStreamableCloseWithOpenStreams(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{Priming: true})
	w.initialize(t)
	get := w.do(t, http.MethodGet, "", nil)
	defer get.Body.Close()
	post := w.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":10}}`), nil)
	defer post.Body.Close()
	sample := w.do(t, http.MethodPost, reqJSON(2, "tools/call", `{"name":"sample","arguments":{"prompt":"never answered"}}`), nil)
	defer sample.Body.Close()
	if ev, err := newSSEReader(sample.Body).next(); err != nil || ev.data != "" {
		t.Fatalf("priming: %+v %v", ev, err)
	}
	start := time.Now()
	s.Close()
	s.Close()
	if d := time.Since(start); d > serve.CloseGrace/2 {
		t.Errorf("Close took %v", d)
	}
	for _, r := range []*http.Response{get, post, sample} {
		_, _ = io.ReadAll(r.Body) // ends, cleanly or not
	}
}

func TestStreamableCloseStuckWriter(t *testing.T) {
	s, w := startHTTP(t, HTTPOptions{})
	w.initialize(t)
	// A flood of progress notifications to a client that stops reading:
	// the server's write blocks, and Close must still return.
	resp := w.do(t, http.MethodPost, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":1000000000,"delayMs":0},"_meta":{"progressToken":1}}`), nil)
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		s.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("Close hangs on a client that does not read")
	}
	t.Logf("Close took %v", time.Since(start))
}
