package otelmcp

import "go.opentelemetry.io/otel/attribute"

// The attribute names of OpenTelemetry's semantic conventions for MCP
// that this package sets.
const (
	AttrMethodName          = attribute.Key("mcp.method.name")
	AttrToolName            = attribute.Key("gen_ai.tool.name")
	AttrPromptName          = attribute.Key("gen_ai.prompt.name")
	AttrResourceURI         = attribute.Key("mcp.resource.uri")
	AttrOperationName       = attribute.Key("gen_ai.operation.name")
	AttrRequestID           = attribute.Key("jsonrpc.request.id")
	AttrProtocolVersion     = attribute.Key("mcp.protocol.version")
	AttrSessionID           = attribute.Key("mcp.session.id")
	AttrNetworkTransport    = attribute.Key("network.transport")
	AttrNetworkProtocolName = attribute.Key("network.protocol.name")
	AttrServerAddress       = attribute.Key("server.address")
	AttrServerPort          = attribute.Key("server.port")
	AttrErrorType           = attribute.Key("error.type")
	AttrStatusCode          = attribute.Key("rpc.response.status_code")
	AttrToolArguments       = attribute.Key("gen_ai.tool.call.arguments")
	AttrToolResult          = attribute.Key("gen_ai.tool.call.result")
)

// Attributes of this package's own, on span events and on the task and
// input attributes the conventions do not name.
const (
	AttrTaskID     = attribute.Key("mcp.task.id")
	AttrTaskStatus = attribute.Key("mcp.task.status")
	AttrInputRound = attribute.Key("mcp.input_required.round")
	AttrHTTPStatus = attribute.Key("http.response.status_code")
	AttrRetryWait  = attribute.Key("mcp.retry.wait")
	AttrReason     = attribute.Key("exception.message")
	// AttrOutcome is whether a request the bridge answered with an error
	// may have run upstream: the jsonrpc.OutcomeKey member of the error's
	// data ("unknown", "not-run"), on a SERVER span.
	AttrOutcome = attribute.Key("anymcp.outcome")
)

// Span event names: what happened to a request on its way.
const (
	EventRetry         = "retry"          // the transport sent the HTTP request again (429, 503, refused)
	EventResend        = "resend"         // the Conn sent the request again as a new request
	EventReinitialize  = "reinitialize"   // the session expired; re-initializing before sending again
	EventInputRequired = "input_required" // the server asked for input; answered and sent again
	EventTaskCreated   = "task_created"   // the server made a task of the request
	EventTaskPolled    = "task_polled"    // a poll (its own child span) found the task's status
	EventSent          = "sent"           // a later attempt went out, with its jsonrpc.request.id
)

// Error types (error.type) besides a JSON-RPC error code ("-32602") and an
// HTTP status ("503").
const (
	ErrorTool           = "tool_error"      // a tools/call result with isError
	ErrorTimeout        = "timeout"         // the call's timeout ran out
	ErrorCancelled      = "cancelled"       // the caller's context ended
	ErrorOutcomeUnknown = "outcome_unknown" // the answer was lost: the request may have run
	ErrorClosed         = "closed"          // the Conn was closed
	ErrorTransport      = "transport_error" // any other failure of the transport
)

// durationBuckets are the bucket boundaries, in seconds, the conventions
// give both duration metrics.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
