package wire

import "github.com/anymcp/anymcp/jsonrpc"

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
