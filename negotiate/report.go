package negotiate

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anymcp/anymcp/mcp"
)

// Transport names, as Info and the report give them.
const (
	StreamableHTTP = "streamable-http"
	SSE            = "sse"
)

// Attempt is one rung of the ladder: one HTTP exchange and what came of it.
type Attempt struct {
	Era       mcp.Era       `json:"era"`               // the era the request belongs to
	Transport string        `json:"transport"`         // StreamableHTTP, SSE, or a transport's name
	Request   string        `json:"request,omitempty"` // RequestDiscover or RequestInitialize
	Version   string        `json:"version,omitempty"` // the revision a stateless request carried
	Method    string        `json:"method"`            // POST or GET
	URL       string        `json:"url"`
	Status    int           `json:"status,omitempty"` // 0 when no HTTP answer came
	Answer    string        `json:"answer,omitempty"` // without HTTP: "answered", "refused" or "no answer"
	Duration  time.Duration `json:"durationNs"`
	Error     string        `json:"error,omitempty"`
	Decision  string        `json:"decision"` // what the ladder did next, and why
}

// Report is the whole negotiation: every attempt in order and the outcome.
type Report struct {
	URL             string    `json:"url"`
	TransportPolicy string    `json:"policy"`
	EraPolicy       string    `json:"eraPolicy"`
	FromCache       bool      `json:"fromCache"` // the first rung came from a cached outcome
	Attempts        []Attempt `json:"attempts"`
	Chosen          string    `json:"chosen,omitempty"` // the transport in use; empty on failure
	Era             mcp.Era   `json:"era,omitempty"`    // the era in use; empty on failure
}

// String prints the report for a person, one attempt a line.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "negotiation for %s (policy %s, era %s", r.URL, r.TransportPolicy, r.EraPolicy)
	if r.FromCache {
		b.WriteString(", cached outcome first")
	}
	b.WriteString(")\n")
	for i, a := range r.Attempts {
		status := "no answer"
		switch {
		case a.Status != 0:
			status = fmt.Sprint(a.Status)
		case a.Answer != "":
			status = a.Answer
		}
		what := strings.TrimSpace(a.Method + " " + a.Request)
		if a.Version != "" {
			what += " (" + a.Version + ")"
		}
		fmt.Fprintf(&b, "  %d. %-10s %-15s %s %s → %s in %v", i+1, a.Era, a.Transport, what, a.URL, status, a.Duration.Round(time.Microsecond))
		if a.Error != "" {
			fmt.Fprintf(&b, " (%s)", oneLine(a.Error, 160))
		}
		fmt.Fprintf(&b, "\n     %s\n", a.Decision)
	}
	if r.Chosen != "" {
		fmt.Fprintf(&b, "  using %s, %s era\n", r.Chosen, r.Era)
	} else {
		b.WriteString("  no transport worked\n")
	}
	return b.String()
}

// oneLine folds s onto one line (runs of white space become one space)
// and cuts it to about max bytes, for the report's text form; the JSON
// form keeps the whole error.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
