package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// MCP-specific error codes, by the revision that introduced them.
const (
	// CodeResourceNotFound answers resources/read for an unknown URI
	// (specification text of 2025-06-18 and later).
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired: the request needs a URL-mode elicitation
	// to finish first (2025-11-25).
	CodeURLElicitationRequired = -32042
	// CodeHeaderMismatch: an HTTP header disagrees with the body (2026-07-28).
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a client capability
	// the client did not declare (2026-07-28).
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the server does not speak the
	// requested revision; data.supported lists the ones it does (2026-07-28).
	CodeUnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error object. It is both what a peer sends in an
// error response and a Go error.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns "jsonrpc error CODE: MESSAGE".
func (e *Error) Error() string {
	return "jsonrpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// NewError returns an error with code and message and no data.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// OutcomeKey is the member of an error's data that says whether the
// request ran, sent by a server that passed the request on (a bridge, a
// gateway) and so knows no more than that. Its value is OutcomeUnknown or
// OutcomeNotRun. The key is namespaced, so that it cannot collide with a
// member of a server's own data (docs/outcomes.md).
const OutcomeKey = "io.github.anymcp/outcome"

// Values of OutcomeKey.
const (
	// OutcomeUnknown: the request was passed on and its answer lost; it
	// may have run. An *Error carrying it matches ErrOutcomeUnknown.
	OutcomeUnknown = "unknown"
	// OutcomeNotRun: the request was refused before it was passed on; it
	// did not run, and may be sent again.
	OutcomeNotRun = "not-run"
)

// Outcome returns the OutcomeKey member of the error's data: OutcomeUnknown,
// OutcomeNotRun, or "" when the data has none (or is no JSON object).
func (e *Error) Outcome() string {
	if !isObject(e.Data) {
		return ""
	}
	var d struct {
		Outcome string `json:"io.github.anymcp/outcome"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Outcome
}

// Is matches ErrOutcomeUnknown when the error's data says the request may
// have run (Outcome is OutcomeUnknown): the answer of a bridge whose own
// upstream's answer was lost.
func (e *Error) Is(target error) bool {
	return target == ErrOutcomeUnknown && e.Outcome() == OutcomeUnknown
}

// WithOutcome returns a copy of e whose data carries outcome under
// OutcomeKey. The members of object data are kept; other data (a string,
// an array) is kept under "value", as a string when it is no valid JSON.
func (e *Error) WithOutcome(outcome string) *Error {
	out := *e
	data := map[string]json.RawMessage{}
	switch d := bytes.TrimSpace(e.Data); {
	case len(d) == 0 || string(d) == "null":
	case isObject(d) && json.Unmarshal(d, &data) == nil:
	case json.Valid(d):
		data = map[string]json.RawMessage{"value": d}
	default:
		v, _ := json.Marshal(string(d))
		data = map[string]json.RawMessage{"value": v}
	}
	data[OutcomeKey], _ = json.Marshal(outcome)
	out.Data, _ = json.Marshal(data)
	return &out
}

// isObject reports whether data is (or starts as) a JSON object.
func isObject(data json.RawMessage) bool {
	d := bytes.TrimLeft(data, " \t\r\n")
	return len(d) > 0 && d[0] == '{'
}
