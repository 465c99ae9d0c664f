package testservers

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/mcp"
)

// cursorPrefix marks the cursors this package issues, so a made-up or
// stale cursor is recognised as invalid.
const cursorPrefix = "testservers-offset:"

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

func decodeCursor(cursor string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// page returns the page of items that the list request's params ask for
// and the cursor of the next page ("" on the last). Without a page size
// every item is on one page.
func page[T any](params json.RawMessage, items []T, size int) ([]T, string, error) {
	var p mcp.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, "", err
	}
	start := 0
	if p.Cursor != "" {
		n, ok := decodeCursor(p.Cursor)
		if !ok || n > len(items) {
			return nil, "", invalidParams("invalid cursor")
		}
		start = n
	}
	if size <= 0 {
		return items[start:], "", nil
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = encodeCursor(end)
	}
	return items[start:end], next, nil
}
