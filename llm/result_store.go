package llm

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/anymcp/anymcp/mcp"
)

// Handle names a result's whole text, kept by a Store.
type Handle struct {
	ID   string `json:"handle"`
	Size int    `json:"size"` // bytes of the whole text
}

// Store keeps the whole text of results that were cut, for the
// read_result tool to read. Its methods are safe for concurrent use.
type Store interface {
	// Put keeps text and names it.
	Put(ctx context.Context, text string) (Handle, error)
	// Read returns up to length bytes of the text kept as id, from
	// offset, and the text's whole size. An unknown or evicted id is
	// ErrNoHandle.
	Read(ctx context.Context, id string, offset, length int) (chunk []byte, size int, err error)
}

// Errors of the stores.
var (
	ErrNoHandle = errors.New("no result text is kept under this handle (unknown, or evicted to bound memory)")
	ErrTooLarge = errors.New("the result text is larger than the whole store")
)

// newID is 16 hex digits, random: not guessable from another handle.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID says whether id is one newID could have made: a file store
// never opens a path a model chose.
func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// MemoryStore keeps texts in memory, at most MaxBytes of them: the
// oldest are evicted to make room.
type MemoryStore struct {
	max   int
	mu    sync.Mutex
	used  int
	order *list.List               // oldest first; values are ids
	byID  map[string]*list.Element // id → element
	texts map[string]string
}

// DefaultStoreBytes bounds a store made with a size of 0.
const DefaultStoreBytes = 64 << 20

// NewMemoryStore returns a store of at most maxBytes (0:
// DefaultStoreBytes).
func NewMemoryStore(maxBytes int) *MemoryStore {
	if maxBytes <= 0 {
		maxBytes = DefaultStoreBytes
	}
	return &MemoryStore{max: maxBytes, order: list.New(), byID: map[string]*list.Element{}, texts: map[string]string{}}
}

// Put keeps text, evicting the oldest texts while the store is over its
// bound. A text larger than the bound is ErrTooLarge.
func (s *MemoryStore) Put(_ context.Context, text string) (Handle, error) {
	if len(text) > s.max {
		return Handle{}, fmt.Errorf("%w (%d bytes, the store holds %d)", ErrTooLarge, len(text), s.max)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.used+len(text) > s.max {
		s.evictLocked()
	}
	id := newID()
	s.byID[id] = s.order.PushBack(id)
	s.texts[id] = text
	s.used += len(text)
	return Handle{ID: id, Size: len(text)}, nil
}

func (s *MemoryStore) evictLocked() {
	e := s.order.Front()
	id := e.Value.(string)
	s.order.Remove(e)
	s.used -= len(s.texts[id])
	delete(s.texts, id)
	delete(s.byID, id)
}

// Read returns a piece of a kept text.
func (s *MemoryStore) Read(_ context.Context, id string, offset, length int) ([]byte, int, error) {
	s.mu.Lock()
	t, ok := s.texts[id]
	s.mu.Unlock()
	if !ok {
		return nil, 0, ErrNoHandle
	}
	lo, hi := span(offset, length, len(t))
	return []byte(t[lo:hi]), len(t), nil
}

// Bytes is how many bytes the store holds now.
func (s *MemoryStore) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func span(offset, length, size int) (lo, hi int) {
	lo = min(max(offset, 0), size)
	hi = lo + min(max(length, 0), size-lo)
	return lo, hi
}

// FileStore keeps texts as files in a directory the host names, at most
// MaxBytes of them: the oldest files it wrote are removed to make room.
type FileStore struct {
	dir   string
	max   int
	mu    sync.Mutex
	used  int
	order *list.List // oldest first; values are fileEntry
}

type fileEntry struct {
	id   string
	size int
}

// NewFileStore returns a store writing into dir (made, mode 0700, if
// missing), of at most maxBytes (0: DefaultStoreBytes).
func NewFileStore(dir string, maxBytes int) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("result store: %w", err)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultStoreBytes
	}
	return &FileStore{dir: dir, max: maxBytes, order: list.New()}, nil
}

func (s *FileStore) path(id string) string { return filepath.Join(s.dir, "result-"+id+".txt") }

// Put writes text into a new file (mode 0600).
func (s *FileStore) Put(_ context.Context, text string) (Handle, error) {
	if len(text) > s.max {
		return Handle{}, fmt.Errorf("%w (%d bytes, the store holds %d)", ErrTooLarge, len(text), s.max)
	}
	id := newID()
	f, err := os.OpenFile(s.path(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Handle{}, fmt.Errorf("result store: %w", err)
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.path(id))
		return Handle{}, fmt.Errorf("result store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.used+len(text) > s.max && s.order.Len() > 0 {
		e := s.order.Front()
		old := e.Value.(fileEntry)
		s.order.Remove(e)
		s.used -= old.size
		os.Remove(s.path(old.id))
	}
	s.order.PushBack(fileEntry{id: id, size: len(text)})
	s.used += len(text)
	return Handle{ID: id, Size: len(text)}, nil
}

// Read returns a piece of a kept text.
func (s *FileStore) Read(_ context.Context, id string, offset, length int) ([]byte, int, error) {
	if !validID(id) {
		return nil, 0, ErrNoHandle
	}
	f, err := os.Open(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, ErrNoHandle
	}
	if err != nil {
		return nil, 0, fmt.Errorf("result store: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("result store: %w", err)
	}
	size := int(st.Size())
	lo, hi := span(offset, length, size)
	b := make([]byte, hi-lo)
	if _, err := f.ReadAt(b, int64(lo)); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("result store: %w", err)
	}
	return b, size, nil
}

// ReadResultName is the name of the tool that reads a kept result.
const ReadResultName = "read_result"

// ReadResultTool is the read_result tool, as an MCP tool: a Toolbox with
// a Store offers it, and a gateway may serve it as it is.
func ReadResultTool() mcp.Tool {
	yes, no := true, false
	return mcp.Tool{
		Name:  ReadResultName,
		Title: "Read a cut tool result",
		Description: "Reads part of a tool result that was too long and was cut. " +
			"The cut result names its handle and the byte offset where the cut starts. " +
			"Returns the text from offset, up to length bytes, and says where to continue.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"handle":{"type":"string","description":"the handle the cut result names"},` +
			`"offset":{"type":"integer","minimum":0,"description":"the byte offset to read from"},` +
			`"length":{"type":"integer","minimum":1,"description":"how many bytes to read at most"}},` +
			`"required":["handle","offset","length"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Read a cut tool result", ReadOnlyHint: &yes, IdempotentHint: &yes, OpenWorldHint: &no},
	}
}

// ReadResult answers a read_result call from store: the text asked for,
// at most maxLength bytes (cut to whole UTF-8 characters), and where to
// continue. Bad arguments and unknown handles are results with isError
// that say what to do; the error is only the store's own failure.
func ReadResult(ctx context.Context, store Store, args json.RawMessage, maxLength int) (*mcp.CallToolResult, error) {
	var a struct {
		Handle *string `json:"handle"`
		Offset *int    `json:"offset"`
		Length *int    `json:"length"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Handle == nil || a.Offset == nil || *a.Offset < 0 {
		return toolError(`read_result takes {"handle": string, "offset": integer >= 0, "length": integer >= 1}`), nil
	}
	if store == nil {
		return toolError("no result is kept: this host keeps no cut results"), nil
	}
	length := maxLength
	if a.Length != nil && *a.Length > 0 && *a.Length < length {
		length = *a.Length
	}
	chunk, total, err := store.Read(ctx, *a.Handle, *a.Offset, length)
	if errors.Is(err, ErrNoHandle) {
		return toolError("no result is kept under handle " + strconv.Quote(clip(*a.Handle, 64)) + ": it is unknown, or was evicted to bound memory"), nil
	}
	if err != nil {
		return nil, err
	}
	off := min(*a.Offset, total)
	for len(chunk) > 0 && !utf8.RuneStart(chunk[0]) {
		chunk, off = chunk[1:], off+1
	}
	end := off + len(chunk)
	if end < total {
		for i := len(chunk) - 1; i >= 0 && i >= len(chunk)-utf8.UTFMax; i-- {
			if utf8.RuneStart(chunk[i]) {
				if !utf8.FullRune(chunk[i:]) {
					chunk = chunk[:i]
					end = off + i
				}
				break
			}
		}
	}
	next := "the end of the result."
	if end < total {
		next = fmt.Sprintf("more follows: call %s with offset %d.", ReadResultName, end)
	}
	text := fmt.Sprintf("[bytes %d to %d of %d; %s]\n%s", off, end, total, next, chunk)
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}}, nil
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text)}, IsError: true}
}
