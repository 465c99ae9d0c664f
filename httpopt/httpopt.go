// Package httpopt holds the settings that both HTTP transports of MCP
// take, Streamable HTTP (package modern) and HTTP+SSE (package legacy),
// and that the negotiation passes on to whichever it connects with:
// modern.Options, legacy.Options and the ladder's config embed Common, so
// each setting is declared once.
//
// Hosts that dial through client.Dial set these with client options
// (WithHTTPClient, WithHeader, WithLogger, WithReconnectPolicy) and never
// need this package; it is for hosts that use a transport directly:
//
//	t, err := modern.New(url, modern.Options{
//		Common: httpopt.Common{HTTPClient: hc, Logger: logger},
//	})
package httpopt

import (
	"log/slog"
	"net/http"

	"github.com/anymcp/anymcp/reconnect"
)

// Common configures an HTTP transport. The zero value works.
type Common struct {
	// HTTPClient sends every request; nil means http.DefaultClient. It is
	// never changed: a transport uses copies that carry the library's
	// redirect policy (another origin, a POST turned into a GET, more than
	// five in a row: refused with a *jsonrpc.RedirectError, nothing sent
	// to the Location), then the client's own CheckRedirect. Long-lived
	// streams use a copy without Timeout, so that it does not cut them.
	HTTPClient *http.Client
	// Header holds static headers sent on every request, e.g.
	// Authorization. It is copied, and goes only to the origin dialled.
	Header http.Header
	// Logger receives what a transport drops, ignores or gives up on. Nil
	// discards.
	Logger *slog.Logger
	// MaxEventSize bounds one SSE event (and, over Streamable HTTP, one
	// application/json body). Zero means sse.DefaultMaxEventSize.
	MaxEventSize int
	// Reconnect says how long to wait before reopening or resuming a
	// broken stream, or sending again a request the server answered with
	// 429 or 503, and when to give up. Nil means reconnect.DefaultPolicy().
	Reconnect *reconnect.Policy
}
