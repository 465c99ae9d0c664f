package testkit

import "net/http"

// StatusOutcome is how an HTTP status answering a request that went out
// in full leaves its outcome: Unknown when the server may have run it.
type StatusOutcome struct {
	Status  int
	Body    string
	Unknown bool
}

// StatusOutcomes are the statuses of an answer to a POSTed request, each
// with what it says: a 5xx without a JSON-RPC error leaves open that the
// server ran the request (a 503 too, when the request is not marked
// resendable and so not sent again); a JSON-RPC error body, a 501 and a
// 4xx say it refused it. The JSON-RPC error answers request id 5.
var StatusOutcomes = []StatusOutcome{
	{Status: http.StatusInternalServerError, Unknown: true},
	{Status: http.StatusBadGateway, Body: "upstream reset", Unknown: true},
	{Status: http.StatusGatewayTimeout, Unknown: true},
	{Status: http.StatusServiceUnavailable, Unknown: true},
	{Status: http.StatusInternalServerError, Body: `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"boom"}}`},
	{Status: http.StatusNotImplemented},
	{Status: http.StatusBadRequest},
	{Status: http.StatusForbidden},
	{Status: http.StatusNotFound}, // no session: not an expiry, a refusal
}
