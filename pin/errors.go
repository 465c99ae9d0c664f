package pin

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// ErrFull is wrapped by a NotPinnedError when the pins hold
// Limits.Records tools already: a tool seen for the first time then is
// held back, not trusted unpinned.
var ErrFull = errors.New("the pins hold their limit of tools")

// ErrKey is wrapped by a NotPinnedError for a key that is empty or
// longer than MaxKey bytes.
var ErrKey = errors.New("the key is empty or longer than 1,024 bytes")

// MaxKey is the longest key a Pins takes, in bytes.
const MaxKey = 1024

// ChangedError is the error of Check for a tool whose definition is not
// the one approved: the tool is held back until Approve pins the new
// one. Changes lists what changed (at most MaxChanges, More counts the
// rest); it is nil when the definition approved was too large to keep
// (Limits.Definition, Limits.Kept), and then only the fingerprints say
// it changed.
type ChangedError struct {
	Key         string
	Pinned      string // the fingerprint approved
	Fingerprint string // the fingerprint of the definition listed now
	Changes     []Change
	More        int
	// Definition is the definition listed now, as the server sent it: what
	// Approve takes to pin it, once a person or a policy accepted it.
	Definition json.RawMessage
}

func (e *ChangedError) Error() string {
	var b strings.Builder
	b.WriteString("tool " + quoteKey(e.Key) + " changed since it was approved: ")
	if len(e.Changes) == 0 {
		b.WriteString("fingerprint " + e.Pinned + " is now " + e.Fingerprint + " (the approved definition was too large to keep)")
	}
	for i, c := range e.Changes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(truncate(c.String(), 200))
	}
	if e.More > 0 {
		b.WriteString(" and " + strconv.Itoa(e.More) + " more")
	}
	b.WriteString("; held back until approved again")
	return b.String()
}

// NotPinnedError is the error of Check and Approve for a tool that could
// not be pinned: Err is ErrFull or ErrKey, or wraps ErrInvalid. The tool is held
// back as a changed one is.
type NotPinnedError struct {
	Key string
	Err error
}

func (e *NotPinnedError) Error() string {
	return "tool " + quoteKey(e.Key) + " cannot be pinned, so it is held back: " + e.Err.Error()
}

func (e *NotPinnedError) Unwrap() error { return e.Err }

func quoteKey(k string) string { return strconv.Quote(truncate(k, 200)) }
