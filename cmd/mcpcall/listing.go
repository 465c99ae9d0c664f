package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// maxListPages bounds how many pages a listing follows.
const maxListPages = 10000

// listAll fetches every page of a list method and returns the items of
// key exactly as the server sent them, so that --json loses no field.
func (s *session) listAll(ctx context.Context, method, key string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	cursor := ""
	for range maxListPages {
		var params any
		if cursor != "" {
			params = &mcp.PaginatedParams{Cursor: cursor}
		}
		var page map[string]json.RawMessage
		if err := s.conn.Call(ctx, method, params, &page); err != nil {
			return nil, err
		}
		var items []json.RawMessage
		if raw, ok := page[key]; ok {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, &client.ResultError{Method: method, Err: fmt.Errorf("%s is not a list: %w", key, err)}
			}
		}
		all = append(all, items...)
		cursor = ""
		if raw, ok := page["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &cursor)
		}
		if cursor == "" {
			return all, nil
		}
	}
	return nil, fmt.Errorf("%s: the server kept sending cursors past %d pages", method, maxListPages)
}

// listResult is a listing as --json prints it: {key: [...]} plus meta.
func (s *session) writeList(key string, items []json.RawMessage) error {
	if items == nil {
		items = []json.RawMessage{}
	}
	b, err := json.Marshal(map[string][]json.RawMessage{key: items})
	if err != nil {
		return err
	}
	return s.writeResult(b)
}

// decodeItems decodes the raw items of a method's listing into typed ones
// for human output. An item that does not decode is a *client.ResultError:
// the request ran, only its answer is unusable (exit 5, not 4).
func decodeItems[T any](method string, raw []json.RawMessage) ([]T, error) {
	out := make([]T, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, &client.ResultError{Method: method, Err: err}
		}
	}
	return out, nil
}
