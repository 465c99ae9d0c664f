package wire

import (
	"fmt"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Label names a message in errors and logs: its method and id.
func Label(m *jsonrpc.Message) string {
	switch {
	case m.Method == "":
		return "response (id " + m.ID.String() + ")"
	case m.ID.IsZero():
		return m.Method
	default:
		return m.Method + " (id " + m.ID.String() + ")"
	}
}

// maxListed bounds the revisions VersionList names.
const maxListed = 8

// VersionList names the revisions a server listed, for a report or an
// error: the first maxListed of them, then how many more; a revision that
// is not a short run of letters, digits, dots, dashes and underscores is
// quoted (and cut short), so that a server's list can neither make the
// text huge nor put control characters or terminal escapes in it.
func VersionList(vs []string) string {
	var b strings.Builder
	for i, v := range vs {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(vs)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if plainVersion(v) {
			b.WriteString(v)
		} else {
			fmt.Fprintf(&b, "%.32q", v)
		}
	}
	return b.String()
}

// plainVersion reports whether v can be shown as it is.
func plainVersion(v string) bool {
	if v == "" || len(v) > 32 {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '.', c == '_':
		default:
			return false
		}
	}
	return true
}
