package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// An answer that a grant step does not expect is shown in the error
// without the values of the credentials it holds.
func TestErrorsHideSecretsOfAnswers(t *testing.T) {
	for _, body := range []string{
		`{"client_id":"c","client_secret":"s3cr3t"}`,
		`{"error_description":"x","access_token":"s3cr3t","refresh_token":"s3cr3t"}`,
		`access_token=s3cr3t&token_type=bearer`,
	} {
		got := excerpt([]byte(body))
		if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "…") {
			t.Errorf("excerpt(%s) = %s", body, got)
		}
	}
	for _, body := range []string{`{"error":"invalid_client"}`, `<html>bad gateway</html>`, `a=b&c=d`} {
		if got := excerpt([]byte(body)); got != body {
			t.Errorf("excerpt(%s) = %s: changed with no secret in it", body, got)
		}
	}

	for _, tt := range []struct {
		status int
		body   string
	}{
		{http.StatusAccepted, `{"client_id":"c","client_secret":"s3cr3t"}`}, // a status not expected
		{http.StatusCreated, `{"client_secret":"s3cr3t"}`},                  // no client_id
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tt.status)
			w.Write([]byte(tt.body))
		}))
		m := &serverMetadata{Issuer: srv.URL, RegistrationEndpoint: srv.URL + "/register"}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := register(ctx, srv.Client(), m, &Config{}, "http://127.0.0.1:1/callback", time.Now())
		cancel()
		srv.Close()
		var ge *GrantError
		if !errors.As(err, &ge) {
			t.Fatalf("%d %s: err = %v, want a *GrantError", tt.status, tt.body, err)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%d %s: the error shows the secret: %v", tt.status, tt.body, err)
		}
	}
}
