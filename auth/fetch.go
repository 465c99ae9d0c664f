package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/anymcp/anymcp/internal/origin"
)

// maxMetadata bounds a metadata document or a registration answer.
const maxMetadata = 1 << 20

// errNotFound: the document is not at this location (a 4xx other than
// 429): the next location in the specification's order may have it.
var errNotFound = errors.New("not found")

// getJSON fetches a metadata document with GET and decodes it into v. A
// 4xx is errNotFound (wrapped with the status); other failures are errors
// of their own. header may carry MCP-Protocol-Version, and nothing else of
// the MCP request's: the host's static headers never go to metadata URLs.
// A request that gets no answer gives net/http's *url.Error, its URL
// redacted (origin.RedactError).
func getJSON(ctx context.Context, hc *http.Client, rawURL string, header http.Header, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return origin.RedactError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return fmt.Errorf("HTTP %d: %w", resp.StatusCode, errNotFound)
		}
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" {
		return fmt.Errorf("content type %q, not application/json: %w", mt, errNotFound)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return err
	}
	if len(body) > maxMetadata {
		return fmt.Errorf("document larger than %d bytes", maxMetadata)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	return nil
}

// drain reads a little of a body so that the connection can be reused.
func drain(r io.Reader) { io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }
