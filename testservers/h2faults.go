package testservers

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// HTTP/2 error codes (RFC 9113 section 7) for H2Fault.Reset.
const (
	H2ProtocolError  uint32 = 0x1
	H2InternalError  uint32 = 0x2
	H2RefusedStream  uint32 = 0x7
	H2Cancel         uint32 = 0x8
	h2NoError        uint32 = 0x0
	h2FrameHeaderLen        = 9
)

// HTTP/2 frame types and flags the fault server reads and writes.
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2Ping         = 0x6
	h2GoAway       = 0x7
	h2WindowUpdate = 0x8

	h2FlagEndStream  = 0x1
	h2FlagAck        = 0x1
	h2FlagEndHeaders = 0x4
	h2FlagPadded     = 0x8
)

// H2Fault is what an H2FaultServer does to one request, at the level of
// HTTP/2 frames, where no http.Handler can reach.
type H2Fault struct {
	// Reset, when not 0, ends the request's stream with RST_STREAM and
	// this error code (H2ProtocolError, H2RefusedStream, ...).
	Reset uint32
	// GoAway sends GOAWAY (NO_ERROR) whose last stream id is below the
	// request's: it says the server did not process the request. The
	// server then ignores every new stream on the connection, which it
	// leaves to the client to close.
	GoAway bool
	// Early acts as soon as the request's HEADERS arrive, before its
	// body; the server then never grants the body more flow-control
	// window than the initial 65,535 bytes, so a bigger body cannot be
	// written whole. Without it the server acts once it has read the
	// request whole (its last DATA frame).
	Early bool
}

// H2FaultServer is an HTTPS server on 127.0.0.1 that speaks just enough
// HTTP/2 (no HPACK decoding: it never looks at request headers) to answer
// each request it gets, in order of arrival, with the next of its faults
// — a stream reset (RST_STREAM) or a GOAWAY, before or after reading the
// request's body — and every request after the last fault with 200 and an
// application/json body holding an empty result for the request's id. It
// counts the requests whose HEADERS arrived and those it read whole: a
// request read whole is one a real server may have run.
type H2FaultServer struct {
	// URL is https://127.0.0.1:PORT/mcp.
	URL string

	ts *httptest.Server

	mu       sync.Mutex
	faults   []H2Fault
	begun    int // requests whose HEADERS arrived
	received int // requests read whole
}

// StartH2Faults starts a fault server whose n-th request gets faults[n-1].
func StartH2Faults(faults ...H2Fault) *H2FaultServer {
	s := &H2FaultServer{faults: faults}
	s.ts = httptest.NewUnstartedServer(http.NotFoundHandler())
	s.ts.EnableHTTP2 = true
	s.ts.Config.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){
		"h2": func(_ *http.Server, c *tls.Conn, _ http.Handler) { s.serveConn(c) },
	}
	s.ts.StartTLS()
	s.URL = s.ts.URL + "/mcp"
	return s
}

// Client returns an HTTP client that trusts the server's certificate and
// speaks HTTP/2 to it.
func (s *H2FaultServer) Client() *http.Client { return s.ts.Client() }

// Begun returns how many requests the server saw begin (their HEADERS).
func (s *H2FaultServer) Begun() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.begun
}

// Received returns how many requests the server read whole: every one of
// them may have run, had the server been a real one.
func (s *H2FaultServer) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// Close cuts every connection and stops the server. It is idempotent.
func (s *H2FaultServer) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// h2Stream is one request being read.
type h2Stream struct {
	fault *H2Fault // nil: answered
	body  []byte
	done  bool // acted upon: later frames of it are ignored
}

// serveConn serves one connection until the client or Close ends it.
func (s *H2FaultServer) serveConn(c *tls.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	preface := make([]byte, len("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	if _, err := io.ReadFull(br, preface); err != nil {
		return
	}
	w := &h2Writer{w: c}
	w.frame(h2Settings, 0, 0, nil)
	streams := make(map[uint32]*h2Stream)
	goingAway := false // a GOAWAY went out: new streams are ignored
	var hdr [h2FrameHeaderLen]byte
	for w.err == nil {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := hdr[3], hdr[4]
		id := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return
		}
		switch typ {
		case h2Settings:
			if flags&h2FlagAck == 0 {
				w.frame(h2Settings, h2FlagAck, 0, nil)
			}
		case h2Ping:
			if flags&h2FlagAck == 0 {
				w.frame(h2Ping, h2FlagAck, 0, payload)
			}
		case h2Headers:
			if goingAway {
				continue
			}
			st := &h2Stream{fault: s.begin()}
			streams[id] = st
			if st.fault != nil && st.fault.Early {
				goingAway = s.act(w, id, st) || goingAway
				continue
			}
			if flags&h2FlagEndStream != 0 {
				goingAway = s.complete(w, id, st) || goingAway
			}
		case h2Data:
			if n > 0 { // the connection's window back, always
				w.windowUpdate(0, uint32(n))
			}
			st := streams[id]
			if st == nil || st.done {
				continue // an Early fault starves the stream's own window
			}
			data := payload
			if flags&h2FlagPadded != 0 && len(data) > 0 {
				pad := int(data[0])
				data = data[1:]
				if pad <= len(data) {
					data = data[:len(data)-pad]
				}
			}
			st.body = append(st.body, data...)
			if flags&h2FlagEndStream == 0 && n > 0 {
				w.windowUpdate(id, uint32(n))
			}
			if flags&h2FlagEndStream != 0 {
				goingAway = s.complete(w, id, st) || goingAway
			}
		}
	}
}

// begin counts a request's HEADERS and returns its fault, nil for none.
func (s *H2FaultServer) begin() *H2Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begun++
	if s.begun <= len(s.faults) {
		return &s.faults[s.begun-1]
	}
	return nil
}

// complete handles a request read whole; it reports whether the
// connection is going away (GOAWAY).
func (s *H2FaultServer) complete(w *h2Writer, id uint32, st *h2Stream) bool {
	s.mu.Lock()
	s.received++
	s.mu.Unlock()
	if st.fault == nil {
		st.done = true
		s.answer(w, id, st.body)
		return false
	}
	return s.act(w, id, st)
}

// act applies the stream's fault; it reports whether the connection is
// going away (GOAWAY).
func (s *H2FaultServer) act(w *h2Writer, id uint32, st *h2Stream) bool {
	st.done = true
	switch {
	case st.fault.GoAway:
		var p [8]byte
		binary.BigEndian.PutUint32(p[:4], max(id, 2)-2) // the stream before it: this one was not processed
		binary.BigEndian.PutUint32(p[4:], h2NoError)
		w.frame(h2GoAway, 0, 0, p[:])
		return true
	case st.fault.Reset != 0:
		var p [4]byte
		binary.BigEndian.PutUint32(p[:], st.fault.Reset)
		w.frame(h2RSTStream, 0, id, p[:])
	}
	return false
}

// answer sends 200 with an application/json empty result for the id of
// the request in body.
func (s *H2FaultServer) answer(w *h2Writer, id uint32, body []byte) {
	out := &jsonrpc.Message{Result: json.RawMessage(`{}`)}
	if m, err := jsonrpc.DecodeMessage(body); err == nil {
		out.ID = m.ID
	}
	resp, err := jsonrpc.Encode(out)
	if err != nil {
		w.err = err
		return
	}
	// HPACK: ":status: 200" from the static table (index 8), then
	// content-type (static name, index 31) as a literal not indexed.
	block := append([]byte{0x88, 0x0f, 31 - 15, byte(len("application/json"))}, "application/json"...)
	w.frame(h2Headers, h2FlagEndHeaders, id, block)
	w.frame(h2Data, h2FlagEndStream, id, resp)
}

// h2Writer writes frames, remembering the first error.
type h2Writer struct {
	w   io.Writer
	err error
}

func (w *h2Writer) frame(typ, flags byte, id uint32, payload []byte) {
	if w.err != nil {
		return
	}
	b := make([]byte, h2FrameHeaderLen, h2FrameHeaderLen+len(payload))
	b[0], b[1], b[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	b[3], b[4] = typ, flags
	binary.BigEndian.PutUint32(b[5:], id)
	_, w.err = w.w.Write(append(b, payload...))
}

func (w *h2Writer) windowUpdate(id, n uint32) {
	var p [4]byte
	binary.BigEndian.PutUint32(p[:], n)
	w.frame(h2WindowUpdate, 0, id, p[:])
}
