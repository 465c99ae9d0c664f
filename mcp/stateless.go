package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Keys of _meta that revision 2026-07-28 reserves.
const (
	// MetaProtocolVersion: the revision a stateless request is made in.
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaClientInfo: the client's Implementation, on every stateless request.
	MetaClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaClientCapabilities: the client's capabilities, on every stateless
	// request (an empty object when it has none).
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaLogLevel: the least severe notifications/message level the
	// server may send for this request; absent, it sends none.
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaServerInfo: the server's Implementation, in a result's _meta.
	MetaServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaSubscriptionID: the id of the subscriptions/listen request a
	// notification belongs to.
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// Result types (the resultType member every stateless result carries; absent
// means ResultComplete).
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// Cache scopes of a cacheable result.
const (
	CachePublic  = "public"
	CachePrivate = "private"
)

// Cacheable are the members of a result the client may keep for a while
// (tools/list, prompts/list, resources/list, resources/templates/list,
// resources/read and server/discover in revision 2026-07-28): TTLMs is how
// many milliseconds it stays fresh (nil when the server said nothing),
// CacheScope whether a shared cache may keep it.
type Cacheable struct {
	TTLMs      *TTL   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// TTL is a ttlMs, in milliseconds (and each count of milliseconds a Task
// carries). It decodes from any JSON number, so that a cache hint written
// as 60000.0 or 1e20 (integers both, as JSON Schema counts them) leaves
// its result readable: a fraction is dropped, and a number past the range
// of int64 is taken as the bound it passes.
type TTL int64

// UnmarshalJSON reads a JSON number; anything else is an error.
func (t *TTL) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if n, ok := smallInt(b); ok {
		*t = TTL(n)
		return nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return fmt.Errorf("ttlMs: %.32q is not a number", b)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("ttlMs: %w", err)
	}
	switch {
	case f >= math.MaxInt64: // 2^63: the float nearest MaxInt64
		*t = math.MaxInt64
	case f <= math.MinInt64:
		*t = math.MinInt64
	default:
		*t = TTL(f) // toward zero
	}
	return nil
}

// smallInt reads b as a decimal integer of at most 18 digits, which fits
// an int64, without allocating: the ttlMs servers send.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// maxFreshness bounds how long a client keeps a cacheable result, whatever
// its ttlMs says.
const maxFreshness = 24 * time.Hour

// Freshness returns how long the result stays fresh: ttlMs, at most a
// day; zero when the server gave none, or zero or less.
func (c Cacheable) Freshness() time.Duration {
	switch {
	case c.TTLMs == nil || *c.TTLMs <= 0:
		return 0
	case *c.TTLMs >= TTL(maxFreshness/time.Millisecond):
		return maxFreshness // compared in milliseconds: a huge ttlMs overflows a Duration
	}
	return time.Duration(*c.TTLMs) * time.Millisecond
}

// DiscoverResult is the answer to server/discover: what a stateless server
// speaks and offers.
type DiscoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	// ServerInfo is read from _meta (MetaServerInfo), or from a top-level
	// serverInfo member that some servers send instead.
	ServerInfo *Implementation `json:"serverInfo,omitempty"`
	Cacheable
	Meta Meta `json:"_meta,omitempty"`
}

// Server returns the server's Implementation, wherever the result put it.
func (r *DiscoverResult) Server() Implementation {
	if r.ServerInfo != nil {
		return *r.ServerInfo
	}
	var impl Implementation
	if v, ok := r.Meta[MetaServerInfo]; ok {
		if b, err := json.Marshal(v); err == nil {
			_ = json.Unmarshal(b, &impl)
		}
	}
	return impl
}

// InputRequest is one request for input inside an input_required result:
// elicitation/create, sampling/createMessage or roots/list, with its params.
type InputRequest struct {
	Method string `json:"method"`
	Params raw    `json:"params,omitempty"`
}

// InputRequiredResult is the interim answer of a multi round-trip request
// (tools/call, prompts/get, resources/read): the server needs the answers
// to InputRequests (keyed by ids of its choosing) before it can finish,
// and the request is to be sent again, with a new id, carrying those
// answers as inputResponses and RequestState exactly as received.
type InputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	// RequestState is opaque server state; nil when the server sent none
	// (and then the retry must carry none).
	RequestState *string `json:"requestState,omitempty"`
	Meta         Meta    `json:"_meta,omitempty"`
}

// SubscriptionFilter is what a subscriptions/listen stream opts in to.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// IsZero reports whether the filter asks for nothing.
func (f SubscriptionFilter) IsZero() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0
}

// ListenParams are the params of subscriptions/listen (besides _meta).
type ListenParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged: the part of the filter the
// server agreed to honour.
type SubscriptionsAcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// UnsupportedVersionData is the data of a -32022 error: the revisions the
// server speaks, and the one it was asked for.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested,omitempty"`
}
