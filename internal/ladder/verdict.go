package ladder

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/modern"
)

// verdict is what the answer to the stateless probe says about the server.
type verdict struct {
	kind    verdictKind
	version string // retryVersion: the revision to try next
	why     string // for the report
}

type verdictKind int

const (
	isStateless     verdictKind = iota // answered: a stateless server
	isStatelessBare                    // a stateless server without server/discover (404 + -32601)
	retryVersion                       // a stateless server that wants another revision
	isInitialize                       // not a stateless answer: initialize
	giveUp                             // a real error, or no revision in common
)

// endpointEventWhy is the report's account of a POST answered with an
// HTTP+SSE endpoint event.
const endpointEventWhy = "answered with an HTTP+SSE endpoint event, as a 2024-11-05 server answers a POST to its SSE URL"

// judgeProbe reads the answer to the stateless probe (resp, or the error Send
// or the wait returned) as the specification's backward-compatibility rules
// say: a result, or a recognised stateless error (-32022 listing revisions,
// -32020, -32021, or over HTTP a 404 whose body is -32601) means a stateless
// server; any other refusal means an initialize-era one. http says the transport
// has HTTP statuses: then only a 4xx other than 401, 403 and 429 reads as
// initialize-era, and everything else (those, 5xx, network errors, timeouts) is an
// error of its own. Without HTTP any error that is not a stateless one reads
// as initialize-era, and so does no answer at all (timedOut).
func judgeProbe(resp *jsonrpc.Message, err error, http_, timedOut bool, tried string) verdict {
	status := 0
	var rpcErr *jsonrpc.Error
	var he *jsonrpc.HTTPError
	switch {
	case err == nil && resp.Error == nil:
		return judgeDiscover(resp.Result, tried)
	case err == nil:
		rpcErr = resp.Error
	case errors.As(err, &he):
		status, rpcErr = he.StatusCode, he.RPCError
	case timedOut && !http_:
		return verdict{kind: isInitialize, why: "no answer in time: an initialize-era server"}
	case http_ && errors.Is(err, modern.ErrEndpointEvent):
		return verdict{kind: isInitialize, why: endpointEventWhy}
	case http_ && (errors.Is(err, modern.ErrNoResponse) || errors.Is(err, modern.ErrContentType)):
		// A 2xx that is no answer at all (accepted without a body, or a
		// page that is not JSON): no stateless server answers so.
		return verdict{kind: isInitialize, why: "a 2xx without a JSON-RPC answer, not as a stateless server answers: an initialize-era server"}
	case http_:
		return verdict{kind: giveUp, why: "not a reason to try the initialize handshake: stopping"}
	default:
		return verdict{kind: giveUp, why: "the transport failed: stopping"}
	}

	if rpcErr != nil {
		switch rpcErr.Code {
		case jsonrpc.CodeUnsupportedProtocolVersion:
			if supported, ok := supportedList(rpcErr); ok {
				return chooseVersion(supported, tried)
			}
		case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingClientCapability:
			return verdict{kind: giveUp, why: fmt.Sprintf("a stateless server refused the request (%v): stopping", rpcErr)}
		case jsonrpc.CodeMethodNotFound:
			if status == http.StatusNotFound {
				return verdict{kind: isStatelessBare, why: "404 with -32601: a stateless server without server/discover"}
			}
		}
	}
	if !http_ || status == 0 {
		return verdict{kind: isInitialize, why: fmt.Sprintf("refused with %v, not a stateless-era error: an initialize-era server", rpcErr)}
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return verdict{kind: giveUp, why: fmt.Sprintf("%d asks for authorization: not a reason to try another era: stopping", status)}
	case status == http.StatusTooManyRequests:
		return verdict{kind: giveUp, why: "429 still after waiting: stopping"}
	case status >= 400 && status < 500:
		return verdict{kind: isInitialize, why: fmt.Sprintf("%d without a stateless-era error: an initialize-era server: trying initialize", status)}
	}
	return verdict{kind: giveUp, why: fmt.Sprintf("%d is not a reason to try another era: stopping", status)}
}

// judgeDiscover reads a result to server/discover. Only a DiscoverResult
// — supportedVersions listing revisions — says a stateless server: some initialize-era
// servers answer any method they do not know with an empty result.
func judgeDiscover(result json.RawMessage, tried string) verdict {
	var r struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if jsondec.Unmarshal(result, &r) != nil || len(r.SupportedVersions) == 0 {
		return verdict{kind: isInitialize, why: "answered without supportedVersions, not as a stateless server: an initialize-era server"}
	}
	if slices.Contains(r.SupportedVersions, tried) {
		return verdict{kind: isStateless, why: "answered: a stateless server"}
	}
	return chooseVersion(r.SupportedVersions, tried)
}

// chooseVersion picks the revision to go on with from what a -32022 error
// listed: the newest stateless one both speak (tried again at most once: a
// server may refuse the first request whatever it names), else the initialize-era
// handshake when the server lists an initialize-era revision we speak.
func chooseVersion(supported []string, tried string) verdict {
	if v := mcp.BestVersion(mcp.EraStateless, supported); v != "" {
		return verdict{kind: retryVersion, version: v,
			why: fmt.Sprintf("-32022: the server speaks %s: trying %s", wire.VersionList(supported), v)}
	}
	if mcp.BestVersion(mcp.EraInitialize, supported) != "" {
		return verdict{kind: isInitialize, why: fmt.Sprintf("-32022: the server lists only initialize-era revisions (%s): trying initialize", wire.VersionList(supported))}
	}
	return verdict{kind: giveUp, why: fmt.Sprintf("-32022: the server speaks %s, this client none of them", wire.VersionList(supported))}
}

// supportedList reads data.supported of a JSON-RPC error.
func supportedList(e *jsonrpc.Error) ([]string, bool) {
	if e == nil || len(e.Data) == 0 {
		return nil, false
	}
	var data mcp.UnsupportedVersionData
	if json.Unmarshal(e.Data, &data) != nil || len(data.Supported) == 0 {
		return nil, false
	}
	return data.Supported, true
}

// statelessRefusal reports whether a refusal of the initialize handshake came from
// a stateless server: -32022 listing a stateless revision we speak, or a
// revision list with none we speak at all, or -32601 for initialize.
func statelessRefusal(e *jsonrpc.Error) bool {
	if supported, ok := supportedList(e); ok {
		return mcp.BestVersion(mcp.EraStateless, supported) != "" || mcp.BestVersion(mcp.EraInitialize, supported) == ""
	}
	return e != nil && (e.Code == jsonrpc.CodeMethodNotFound || e.Code == jsonrpc.CodeUnsupportedProtocolVersion)
}
