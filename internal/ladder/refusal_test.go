package ladder_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// refusal is the error of a layer under the ladder's HTTP client that
// turns the server's answer into an error (an authorizer that got a 401
// and no credentials), saying which status it was.
type refusal struct{ status int }

func (e *refusal) Error() string   { return "no credentials for this server" }
func (e *refusal) HTTPStatus() int { return e.status }

// refusingTransport passes requests on, and turns a 401 into a refusal.
type refusingTransport struct{}

func (refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	resp.Body.Close()
	return nil, &refusal{resp.StatusCode}
}

// TestAnswerTurnedIntoError: an exchange the server answered, whose answer
// a layer under the ladder turned into an error, is reported with the
// server's status, never as "no answer".
func TestAnswerTurnedIntoError(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusUnauthorized})
	defer srv.Close()
	_, err := connect(t, srv.URL, ladder.Config{Common: httpopt.Common{HTTPClient: &http.Client{Transport: refusingTransport{}}}})
	var ne *negotiate.Error
	if !errors.As(err, &ne) || ne.Report == nil || len(ne.Report.Attempts) == 0 {
		t.Fatalf("err %v, want a negotiation error with its report", err)
	}
	if a := ne.Report.Attempts[0]; a.Status != http.StatusUnauthorized {
		t.Errorf("attempt %+v, want status 401", a)
	}
	for what, s := range map[string]string{"report": ne.Report.String(), "error": err.Error()} {
		if strings.Contains(s, "no answer") || !strings.Contains(s, "→ 401") {
			t.Errorf("the %s says no answer came, or not that 401 did:\n%s", what, s)
		}
	}
}
