package wire

import (
	"net/http"
	"strings"
)

// publicHeaders are request headers whose values say nothing secret: the
// library's own, which a server may echo as it likes.
var publicHeaders = map[string]bool{
	"Accept":               true,
	"Accept-Encoding":      true,
	"Content-Type":         true,
	"Content-Length":       true,
	"Last-Event-Id":        true,
	"Mcp-Protocol-Version": true,
	"Mcp-Method":           true,
	"Mcp-Name":             true,
	"User-Agent":           true,
}

// minSecretLen: a header value shorter than this is not hidden, so that
// a short value ("1", "yes") does not blank out every occurrence of it.
const minSecretLen = 6

// HideRequestSecrets returns s, text the server sent in answer to req (an
// error body), with the values of req's headers replaced by "…": a server
// that echoes the request in its error (a debugging proxy, a framework's
// error page) would otherwise put the host's credentials — Authorization,
// an API key header, the session id — into an error the host logs. Every
// header counts but the library's own (publicHeaders); an Authorization
// value is hidden whole and without its scheme ("Bearer …"), and its
// token alone.
func HideRequestSecrets(s string, req *http.Request) string {
	if req == nil || s == "" {
		return s
	}
	var secrets []string
	for name, values := range req.Header {
		if publicHeaders[name] {
			continue
		}
		for _, v := range values {
			secrets = append(secrets, v)
			if scheme, cred, ok := strings.Cut(v, " "); ok && scheme != "" {
				secrets = append(secrets, strings.TrimSpace(cred))
			}
		}
	}
	for _, v := range secrets {
		if len(v) >= minSecretLen {
			s = strings.ReplaceAll(s, v, "…")
		}
	}
	return s
}
