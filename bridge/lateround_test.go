package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// askThenGiveUp is an upstream whose tool "gated" asks the client
// (Downstream.Elicit) and, when the test says so, stops waiting and
// answers a result of its own, as a gateway's approval that times out
// does. Every other request goes to the real upstream.
type askThenGiveUp struct {
	Upstream
	elicit func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	giveUp chan struct{} // closed by the test: stop waiting for the answer
	ended  chan struct{} // closed when the tool has answered
}

func (u *askThenGiveUp) Call(ctx context.Context, method string, params, result any, opts ...client.CallOption) error {
	b, _ := json.Marshal(params)
	if method != "tools/call" || !strings.Contains(string(b), `"gated"`) {
		return u.Upstream.Call(ctx, method, params, result, opts...)
	}
	if u.elicit == nil {
		return errors.New("the client declared no elicitation")
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-u.giveUp:
			cancel()
		case <-actx.Done():
		}
	}()
	_, err := u.elicit(actx, &mcp.ElicitParams{Message: "may I?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
	defer close(u.ended)
	if err == nil {
		return errors.New("the test never answers before giving up")
	}
	*result.(*json.RawMessage) = json.RawMessage(`{"content":[{"type":"text","text":"gave up waiting"}],"isError":true}`)
	return nil
}

// A call that ends while its client is away answering keeps its round:
// the retry gets the call's own answer, not "the round has ended" (which
// says the call may have run, when it answered). The round is gone once
// the answer is taken.
func TestStatelessRoundEndedBeforeRetry(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	var (
		mu    sync.Mutex
		gated *askThenGiveUp
	)
	base := DialTarget(client.URL(up.URL))
	dial := func(ctx context.Context, d Downstream) (Upstream, error) {
		conn, err := base(ctx, d)
		if err != nil || d.Elicit == nil {
			return conn, err
		}
		mu.Lock()
		defer mu.Unlock()
		gated = &askThenGiveUp{Upstream: conn, elicit: d.Elicit, giveUp: make(chan struct{}), ended: make(chan struct{})}
		return gated, nil
	}
	b, url := startDialer(t, dial, Options{})

	params := map[string]any{"name": "gated", "arguments": map[string]any{}}
	first := resultOf(t, statelessCall(t, url, 1, "tools/call", params, elicitCaps))
	reqs, _ := first["inputRequests"].(map[string]any)
	if first["resultType"] != mcp.ResultInputRequired || len(reqs) != 1 {
		t.Fatalf("first answer %v", first)
	}
	mu.Lock()
	u := gated
	mu.Unlock()
	close(u.giveUp)
	<-u.ended

	answers := map[string]any{}
	for k := range reqs {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{}}
	}
	retry := map[string]any{"name": "gated", "arguments": map[string]any{}, "inputResponses": answers, "requestState": first["requestState"]}
	done := resultOf(t, statelessCall(t, url, 2, "tools/call", retry, elicitCaps))
	if done["resultType"] != "complete" || textOf(t, done) != "gave up waiting" || done["isError"] != true {
		t.Fatalf("the retry after the call ended: %v", done)
	}
	if n := b.rounds.len(); n != 0 {
		t.Fatalf("%d rounds left after the answer was taken", n)
	}
	again := statelessCall(t, url, 3, "tools/call", retry, elicitCaps)
	if again.resp == nil || again.resp.Error == nil || again.resp.Error.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("the same state again: %+v", again.resp)
	}
}

// A round whose call ended while parked stays until its timeout, then
// goes; one given up by its timeout goes when its call ends; one driven
// by a request goes as its call ends.
func TestRoundKeptUntilRetryOrTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := newRoundTable(4)
		newRound := func() *pendingCall {
			_, cancel := context.WithCancel(t.Context())
			p := newPendingCall("tools/call", "x", cancel)
			if !table.add(p) {
				t.Fatal("table full")
			}
			p.resume()
			return p
		}
		drop := func(p *pendingCall) func() { return func() { table.remove(p.id) } }
		end := func(p *pendingCall) {
			if !p.finish(outcome{raw: json.RawMessage(`{}`)}) {
				table.remove(p.id)
			}
		}

		parked := newRound()
		parked.park(time.Minute, drop(parked))
		end(parked)
		if table.get(parked.id) == nil {
			t.Fatal("a round whose call ended while parked was dropped before its retry")
		}
		time.Sleep(time.Minute) // the round's timeout: time is the event
		synctest.Wait()
		if table.get(parked.id) != nil {
			t.Fatal("an ended round outlived its timeout")
		}

		expired := newRound()
		expired.park(time.Minute, drop(expired))
		time.Sleep(time.Minute)
		synctest.Wait()
		if table.get(expired.id) == nil {
			t.Fatal("a round still running was dropped at its timeout, before its call ended")
		}
		end(expired) // the timeout cancelled it; it ends
		if table.get(expired.id) != nil {
			t.Fatal("a round given up by its timeout stayed after its call ended")
		}

		driven := newRound() // busy: a request drives it and takes the outcome
		end(driven)
		if table.get(driven.id) != nil {
			t.Fatal("a driven round stayed after its call ended")
		}
		if table.len() != 0 {
			t.Fatalf("%d rounds left", table.len())
		}
	})
}
