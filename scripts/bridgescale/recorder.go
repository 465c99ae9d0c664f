package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/anymcp/anymcp/scripts/internal/scaleout"
)

// maxRecordedBody bounds what the recorder reads of a request body to
// learn which round it belongs to. Larger bodies are sent on unread.
const maxRecordedBody = 1 << 20

// legs is where the two legs of one input_required round landed: the
// first request, and its retry that carries inputResponses.
type legs struct {
	first, retry string // replica names; "" when that leg was not seen answered
}

// recorder is an http.RoundTripper that learns, from each answer's
// replica header, which bridge served each leg of each round. With pin
// set, it sends each leg to a bridge of its choosing instead, bypassing
// HAProxy: the first leg to pin.first, the retry to pin.retry.
type recorder struct {
	next http.RoundTripper
	pin  *pinned

	mu     sync.Mutex
	rounds map[string]*legs // by round id (the elicit tool's message)
}

// pinned names the bridges a pinned round's legs go to.
type pinned struct {
	first, retry         *url.URL
	firstName, retryName string
}

func newRecorder(next http.RoundTripper, pin *pinned) *recorder {
	return &recorder{next: next, pin: pin, rounds: make(map[string]*legs)}
}

// roundOf is the round id and leg of a tools/call of the elicit tool.
func roundOf(body []byte) (id string, retry bool) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Message string `json:"message"`
			} `json:"arguments"`
			InputResponses json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || m.Params.Name != roundTool {
		return "", false
	}
	return m.Params.Arguments.Message, len(m.Params.InputResponses) > 0
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.ContentLength > maxRecordedBody {
		return r.next.RoundTrip(r.route(req, false))
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRecordedBody+1))
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	id, retry := roundOf(body)
	out := r.route(req, retry)
	if out == req {
		out = req.Clone(req.Context())
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	resp, err := r.next.RoundTrip(out)
	if err != nil || id == "" {
		return resp, err
	}
	replica := resp.Header.Get(scaleout.ReplicaHeader)
	if r.pin != nil {
		replica = r.pin.firstName
		if retry {
			replica = r.pin.retryName
		}
	}
	r.mu.Lock()
	l := r.rounds[id]
	if l == nil {
		l = &legs{}
		r.rounds[id] = l
	}
	if retry {
		l.retry = replica
	} else {
		l.first = replica
	}
	r.mu.Unlock()
	return resp, nil
}

// route is req sent to the pinned bridge of its leg, or req itself.
func (r *recorder) route(req *http.Request, retry bool) *http.Request {
	if r.pin == nil {
		return req
	}
	to := r.pin.first
	if retry {
		to = r.pin.retry
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = to.Scheme, to.Host
	out.Host = to.Host
	return out
}

// legsOf is where round id's legs landed.
func (r *recorder) legsOf(id string) legs {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.rounds[id]; l != nil {
		return *l
	}
	return legs{}
}
