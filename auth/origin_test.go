package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/jsonrpc"
)

// Requests for metadata, registration and tokens do not follow a redirect
// to another origin, nor one that turns a POST into a GET.
func TestGuardRefusesRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other.URL+"/x", http.StatusFound) })
	mux.HandleFunc("/see-other", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/here", http.StatusSeeOther) })
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	hc := origin.Guard(nil)
	tests := []struct {
		method, path string
		refused      bool
	}{
		{"GET", "/away", true},
		{"POST", "/see-other", true},
		{"POST", "/same", false},
		{"GET", "/see-other", false},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader("x"))
		resp, err := hc.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		var re *jsonrpc.RedirectError
		if tt.refused != errors.As(err, &re) {
			t.Errorf("%s %s: err = %v, refused %v", tt.method, tt.path, err, tt.refused)
		}
	}
	if otherHits.Load() != 0 {
		t.Fatal("the other origin was reached")
	}
}

// An authorization response is used once: its state is spent.
func TestPendingAuthorizationSingleUse(t *testing.T) {
	p := &pendingAuthorization{state: "st", issuer: "https://as.example.com", redirect: "http://127.0.0.1:1/cb"}
	back := "http://127.0.0.1:1/cb?code=c&state=st&iss=https%3A%2F%2Fas.example.com"
	if code, err := p.check(back); err != nil || code != "c" {
		t.Fatalf("first use: %q, %v", code, err)
	}
	var se *StateMismatchError
	if _, err := p.check(back); !errors.As(err, &se) {
		t.Fatalf("second use: %v, want *StateMismatchError", err)
	}
	q := &pendingAuthorization{state: "st", issuer: "https://as.example.com", redirect: "http://127.0.0.1:1/cb"}
	if _, err := q.check("http://127.0.0.1:1/elsewhere?code=c&state=st"); err == nil {
		t.Fatal("a redirect to another path was accepted")
	}
}

// Host names fold their ASCII letters only: a spelling that net/http looks
// up elsewhere (IDNA) is neither the loopback host nor the redirect URI's.
func TestHostsFoldASCIIOnly(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true,
		"localho\u017Ft": false, "\u0130bm.localhost.test": false, "localhost.test": false,
		// Looked up through DNS by net/http: no loopback by name.
		"a.LOCALHOST": false, "attacker.localhost": false, "localhost.": false, "127.1": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
	want, _ := url.Parse("http://ibm.test:8080/callback")
	for raw, same := range map[string]bool{
		"HTTP://IBM.test:8080/callback?code=c": true,
		"http://\u0130bm.test:8080/callback":   false,
		"http://ibm.test:8081/callback":        false,
		"http://ibm.test:8080/Callback":        false,
	} {
		got, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if sameRedirectTarget(want, got) != same {
			t.Errorf("sameRedirectTarget(%s, %s) = %v, want %v", want, got, !same, same)
		}
	}
}
