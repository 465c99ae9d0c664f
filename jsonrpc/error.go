package jsonrpc

import (
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
