package access_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/anymcp/anymcp/access"
)

// A server admits its own machine, and two teams by static token, each to
// its own view; a refusal tells the client where the metadata is.
func ExampleMiddleware() {
	tokens, err := access.Tokens(map[string]string{
		"a3f1c9e07b2d4f6a8c0e1b3d5f7a9c2e": "team-a", // in real use, from a secret store
	})
	if err != nil {
		panic(err)
	}
	policy := access.Any(access.Loopback(), tokens)
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, _ := access.GrantOf(r.Context())
		fmt.Fprintf(w, "view %q for %s", g.View, g.Subject)
	})
	h := access.Middleware(policy, "https://gw.example/.well-known/oauth-protected-resource/mcp", mcp)

	for _, auth := range []string{"Bearer a3f1c9e07b2d4f6a8c0e1b3d5f7a9c2e", "", "Bearer wrong-token-0123456789"} {
		r := httptest.NewRequest(http.MethodPost, "https://gw.example/mcp", nil)
		r.RemoteAddr = "203.0.113.9:51000" // not this machine
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Result().Body)
		if w.Code == 200 {
			fmt.Println(w.Code, string(body))
		} else {
			fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	// Output:
	// 200 view "team-a" for static token of view "team-a"
	// 401 Bearer resource_metadata="https://gw.example/.well-known/oauth-protected-resource/mcp"
	// 401 Bearer resource_metadata="https://gw.example/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="the bearer token is not one this server knows"
}
