package testservers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stressClient is a raw client that recovers from every fault the way
// the resilience rules say: 429/503 and 404 (after initializing again)
// are sent again, cut streams with ids are resumed, cut streams without
// ids are given up as "outcome unknown".
type stressClient struct {
	t   *testing.T
	url string
	hc  *http.Client

	mu      sync.Mutex
	session string
	inits   int
}

func (c *stressClient) sessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// reinit opens a new session unless another caller did since old.
func (c *stressClient) reinit(old string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != old {
		return
	}
	for {
		resp, err := c.post("", reqJSON(0, "initialize", initParams))
		if err != nil {
			c.t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			c.session = resp.Header.Get(HeaderSessionID)
			c.inits++
			return
		}
	}
}

func (c *stressClient) post(session, body string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set(HeaderSessionID, session)
	}
	return c.hc.Do(req)
}

func (c *stressClient) get(session, last string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(HeaderSessionID, session)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	return c.hc.Do(req)
}

// readUntilResponse reads a stream; it returns whether the response came,
// and the last event id seen.
func readUntilResponse(body io.Reader, last string) (bool, string) {
	events := newSSEReader(body)
	for {
		ev, err := events.next()
		if err != nil {
			return false, last
		}
		if ev.hasID {
			last = ev.id
		}
		if strings.Contains(ev.data, `"result"`) || strings.Contains(ev.data, `"error"`) {
			return true, last
		}
	}
}

// call makes one once call and returns "ok" or "unknown".
func (c *stressClient) call(id int) string {
	body := reqJSON(id, "tools/call", fmt.Sprintf(`{"name":"once","arguments":{"key":"k%d"}}`, id))
	for {
		session := c.sessionID()
		resp, err := c.post(session, body)
		if err != nil {
			c.t.Error(err)
			return "unknown"
		}
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			resp.Body.Close()
			continue // not run: send it again
		case http.StatusNotFound:
			resp.Body.Close()
			c.reinit(session)
			continue // not run: send it again in the new session
		case http.StatusOK:
		default:
			resp.Body.Close()
			c.t.Errorf("status %d", resp.StatusCode)
			return "unknown"
		}
		ok, last := readUntilResponse(resp.Body, "")
		resp.Body.Close()
		for !ok && last != "" { // resumable: resume until the response
			resp, err := c.get(session, last)
			if err != nil {
				c.t.Error(err)
				return "unknown"
			}
			if resp.StatusCode != http.StatusOK { // the session is gone with the stream
				resp.Body.Close()
				return "unknown"
			}
			ok, last = readUntilResponse(resp.Body, last)
			resp.Body.Close()
		}
		if ok {
			return "ok"
		}
		return "unknown"
	}
}

// TestFaultStress runs concurrent calls and a GET stream against random
// faults over raw HTTP: the server holds up its side of the soak test
// (no request run twice by a client that only resends what was not run,
// every resumable call answered), without races or leaks.
func TestFaultStress(t *testing.T) {
	calls, workers := 1600, 16
	if testing.Short() {
		calls = 320
	}
	s := StartStreamable(HTTPOptions{Priming: true, Faults: RandomFaults(42, 0.03)})
	defer s.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: workers + 1}
	defer tr.CloseIdleConnections()
	c := &stressClient{t: t, url: s.URL, hc: &http.Client{Transport: tr, Timeout: testTimeout}}
	c.reinit("")

	ctx, stop := context.WithCancel(context.Background())
	var getDone sync.WaitGroup
	getDone.Add(1)
	go func() { // the GET stream, resumed whenever it is cut
		defer getDone.Done()
		last := ""
		for ctx.Err() == nil {
			session := c.sessionID()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set(HeaderSessionID, session)
			if last != "" {
				req.Header.Set("Last-Event-ID", last)
			}
			resp, err := c.hc.Do(req)
			if err != nil {
				continue
			}
			if resp.StatusCode == http.StatusOK {
				_, last = readUntilResponse(resp.Body, last)
			} else {
				last = ""
				time.Sleep(time.Millisecond) // a client's pause before it asks again, not an ordering

			}
			resp.Body.Close()
		}
	}()

	var next, ok, unknown atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				id := int(next.Add(1))
				if id > calls {
					return
				}
				if c.call(id) == "ok" {
					ok.Add(1)
				} else {
					unknown.Add(1)
				}
			}
		})
	}
	wg.Wait()
	stop()
	getDone.Wait()

	st := s.Server().Stats()
	if ok.Load()+unknown.Load() != int64(calls) {
		t.Errorf("%d ok + %d unknown != %d calls", ok.Load(), unknown.Load(), calls)
	}
	if st.Duplicates != 0 {
		t.Errorf("%d duplicate executions: %v", st.Duplicates, st.DuplicateKeys)
	}
	if st.Executions < int(ok.Load()) {
		t.Errorf("%d executions for %d answered calls", st.Executions, ok.Load())
	}
	t.Logf("calls %d: ok %d, unknown %d; executions %d; sessions %d; resumed %d; faults %v",
		calls, ok.Load(), unknown.Load(), st.Executions, c.inits, st.Resumed, st.Faults)
}
