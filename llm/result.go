package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/mcp"
)

// ToolCall names the model's call a result answers: the ID the provider
// gave it (tool_call_id, tool_use_id, call_id, functionCall.id) and the
// name the model called (Gemini's functionResponse needs it).
type ToolCall struct {
	ID   string
	Name string
}

// Defaults of ResultOptions. DefaultMaxResultBytes was chosen by
// measurement: docs/llm-results.md.
const (
	DefaultMaxResultBytes = 32 << 10 // the text the model reads of one result
	DefaultMaxMediaBytes  = 4 << 20  // decoded bytes of media sent inline, per result
	DefaultMaxMediaBlocks = 16       // media blocks sent inline, per result
)

// ResultOptions shape how a result reaches the model. The zero value is
// ready to use: the default caps, no store, media where the target takes it.
type ResultOptions struct {
	// MaxBytes caps the text the model reads (UTF-8 bytes, placeholders
	// included): above it, the head and the tail are kept and the middle
	// is cut. 0 means DefaultMaxResultBytes; negative means no cap.
	MaxBytes int
	// Store keeps a cut result's whole text under a handle that the
	// read_result tool reads. Nil: the cut text is gone, and the model is
	// told so.
	Store Store
	// TextOnly says the model takes no media: every image, audio clip and
	// document becomes a described placeholder.
	TextOnly bool
	// MaxMediaBytes caps the decoded bytes of the media sent inline; a
	// block over it becomes a placeholder. 0 means DefaultMaxMediaBytes.
	MaxMediaBytes int
	// MaxMediaBlocks caps how many media blocks are sent inline. 0 means
	// DefaultMaxMediaBlocks.
	MaxMediaBlocks int
	// ImagesInFollowup, for OpenAI Chat Completions and the compatible
	// servers (whose tool messages take text only), carries the images in
	// ToolResult.Followup, a user message for after the tool messages.
	ImagesInFollowup bool
}

// ToolResult is a tool's result in a provider's wire form.
type ToolResult struct {
	// Message is the provider's tool-result item, as its request takes it:
	//   - OpenAI Chat, compatible servers: {"role":"tool","tool_call_id":…,"content":…}
	//   - OpenAI Responses: {"type":"function_call_output","call_id":…,"output":…}
	//   - Anthropic: {"type":"tool_result","tool_use_id":…,"content":…,"is_error":…},
	//     a block of the next user message
	//   - Gemini: {"functionResponse":{"name":…,"response":…,"parts":…}}, a
	//     part of the next user content
	Message json.RawMessage
	// Followup is, when ImagesInFollowup asked for it and the result holds
	// images, a Chat Completions user message carrying them. Send it after
	// all the tool messages of the turn. Nil otherwise.
	Followup json.RawMessage
	// Structured is the result's structuredContent, untouched, for the
	// host: the model reads the content.
	Structured json.RawMessage
	// IsError is the result's isError.
	IsError bool
	// Handles are where the cut text is kept (at most one today).
	Handles []Handle
	// Changes say what was replaced, moved or cut, and why. Path is a
	// JSON Pointer into the CallToolResult ("/content/2").
	Changes []Change
}

// The actions a result conversion reports, with those of report.go.
const (
	// ResultPlaceholder: a block the target cannot take (or the caps did
	// not let through) replaced by a text saying what it was.
	ResultPlaceholder Action = "placeholder"
	// ResultCut: the text was over the cap; its middle was cut.
	ResultCut Action = "cut"
	// ResultSerialized: structuredContent written as text, the content
	// being empty.
	ResultSerialized Action = "serialized"
	// ResultMarkedError: isError written as a marker in the text, the
	// target having no error flag.
	ResultMarkedError Action = "marked-error"
)

// ErrUnknownProvider is returned for a Target whose Provider is not one
// of this package's.
var ErrUnknownProvider = errors.New("unknown LLM provider")

// partKind is what a part of a converted result is.
type partKind int

const (
	partText partKind = iota
	partImage
	partDocument // a PDF
)

// part is one piece of a result on its way to the wire: text, or media
// (base64 data of a MIME type).
type part struct {
	kind partKind
	text string
	mime string
	data string // base64
	name string // a file name for the media (display name, filename)
}

// caps is what a target takes inside a tool result.
type caps struct {
	images    map[string]bool // image MIME types taken inline
	pdf       bool            // PDFs taken inline
	errorFlag bool            // an error flag (Anthropic's is_error, Gemini's "error" key)
	followup  bool            // images may go in a Chat follow-up user message
}

func capsOf(t Target) (caps, error) {
	switch t.Provider {
	case OpenAIChat, OpenAICompatible:
		return caps{followup: true}, nil
	case OpenAIResponses:
		return caps{images: openAIImages, pdf: true}, nil
	case Anthropic:
		return caps{images: anthropicImages, pdf: true, errorFlag: true}, nil
	case Gemini:
		return caps{images: geminiImages, pdf: true, errorFlag: true}, nil
	case GeminiOpenAPI:
		return caps{errorFlag: true}, nil
	}
	return caps{}, fmt.Errorf("%w %q", ErrUnknownProvider, t.Provider)
}

// The image types each provider takes (docs/llm-results.md says where
// each list comes from).
var (
	openAIImages    = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}
	anthropicImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}
	geminiImages    = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true}
)

// Result turns a tools/call result into the target's tool-result wire
// form, answering call. Nothing is dumped as base64 text: media the
// target cannot take becomes a described placeholder; text over the cap
// keeps its head and tail, and the whole is kept in opts.Store. Every
// such change is in ToolResult.Changes. The error is only for an unknown
// provider or a failing Store; a nil res answers an empty result.
func Result(ctx context.Context, res *mcp.CallToolResult, call ToolCall, target Target, opts ResultOptions) (ToolResult, error) {
	c, err := capsOf(target)
	if err != nil {
		return ToolResult{}, err
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if target.Provider == OpenAIChat || target.Provider == OpenAICompatible {
		c.followup = opts.ImagesInFollowup
	} else {
		c.followup = false
	}
	if opts.TextOnly {
		c.images, c.pdf, c.followup = nil, false, false
	}
	b := builder{caps: c, opts: opts.withDefaults()}
	out := ToolResult{Structured: res.StructuredContent, IsError: res.IsError}
	b.content(res)
	if res.IsError && !c.errorFlag {
		b.parts = append([]part{{kind: partText, text: "Error: the tool reported a failure."}}, b.parts...)
		b.change("/isError", ResultMarkedError, "the target has no error flag for a tool result: a first text line says so")
	}
	if err := b.cap(ctx); err != nil {
		return ToolResult{}, err
	}
	out.Handles = b.handles
	out.Changes = b.changes
	out.Message, out.Followup = wire(target.Provider, call, res.IsError, b.parts, b.followup)
	return out, nil
}

func (o ResultOptions) withDefaults() ResultOptions {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxResultBytes
	}
	if o.MaxMediaBytes <= 0 {
		o.MaxMediaBytes = DefaultMaxMediaBytes
	}
	if o.MaxMediaBlocks <= 0 {
		o.MaxMediaBlocks = DefaultMaxMediaBlocks
	}
	return o
}

// builder gathers a result's parts and what was changed on the way.
type builder struct {
	caps       caps
	opts       ResultOptions
	parts      []part
	followup   []part // images for the Chat follow-up message
	changes    []Change
	handles    []Handle
	mediaBytes int
	mediaCount int
}

func (b *builder) change(path string, a Action, why string) {
	b.changes = append(b.changes, Change{Path: path, Action: a, Why: why})
}

func (b *builder) text(s string) {
	if s != "" {
		b.parts = append(b.parts, part{kind: partText, text: s})
	}
}

func (b *builder) placeholder(path, what, why string) {
	b.text("[" + what + ": not shown, " + why + "]")
	b.change(path, ResultPlaceholder, what+": "+why)
}

func (b *builder) content(res *mcp.CallToolResult) {
	for i, cb := range res.Content {
		path := "/content/" + strconv.Itoa(i)
		switch cb.Type {
		case mcp.ContentText:
			b.text(cb.Text)
		case mcp.ContentImage:
			b.media(path, partImage, cb.MimeType, cb.Data, "image "+strconv.Itoa(i+1)+extension(cb.MimeType))
		case mcp.ContentAudio:
			b.placeholder(path, describeMedia("audio", cb.MimeType, cb.Data), "the target takes no audio in a tool result")
		case mcp.ContentResourceLink:
			b.text(describeLink(cb))
		case mcp.ContentResource:
			b.resource(path, cb.Resource)
		default:
			b.placeholder(path, "a content block of type "+strconv.Quote(clip(cb.Type, 40)), "a tool result does not carry this type")
		}
	}
	if len(res.Content) == 0 && len(res.StructuredContent) > 0 {
		b.text(compactJSON(res.StructuredContent))
		b.change("/structuredContent", ResultSerialized, "the content is empty: the model reads the structured content as JSON text")
	}
}

func (b *builder) resource(path string, r *mcp.ResourceContents) {
	if r == nil {
		b.placeholder(path, "an embedded resource without contents", "there is nothing to show")
		return
	}
	head := "[resource " + clip(r.URI, 512)
	if r.MimeType != "" {
		head += " (" + clip(r.MimeType, 100) + ")"
	}
	head += "]"
	switch {
	case r.Blob == "":
		b.text(head + "\n" + r.Text)
	case r.MimeType == "application/pdf":
		b.text(head)
		b.media(path+"/resource", partDocument, r.MimeType, r.Blob, fileName(r.URI, ".pdf"))
	case strings.HasPrefix(r.MimeType, "image/"):
		b.text(head)
		b.media(path+"/resource", partImage, r.MimeType, r.Blob, fileName(r.URI, extension(r.MimeType)))
	default:
		b.placeholder(path+"/resource", describeMedia("a binary resource "+clip(r.URI, 512), r.MimeType, r.Blob), "the target takes no such data in a tool result")
	}
}

// media adds an image or a document inline when the target takes it and
// the caps allow; otherwise a placeholder says what it was and why not.
func (b *builder) media(path string, kind partKind, mime, data, name string) {
	what := describeMedia(map[partKind]string{partImage: "image", partDocument: "document"}[kind], mime, data)
	takes := (kind == partImage && (b.caps.images[mime] || b.caps.followup && openAIImages[mime])) ||
		(kind == partDocument && b.caps.pdf)
	if !takes {
		why := "the target takes no " + clip(mime, 100) + " in a tool result"
		if b.opts.TextOnly {
			why = "the model takes text only"
		}
		b.placeholder(path, what, why)
		return
	}
	if b.mediaCount >= b.opts.MaxMediaBlocks {
		b.placeholder(path, what, "over the cap of "+strconv.Itoa(b.opts.MaxMediaBlocks)+" media blocks per result")
		return
	}
	overCap := func(n int) bool {
		if b.mediaBytes+n > b.opts.MaxMediaBytes {
			b.placeholder(path, what, "over the cap of "+size(b.opts.MaxMediaBytes)+" of media per result")
			return true
		}
		return false
	}
	if overCap(base64.StdEncoding.DecodedLen(len(data)) - 2) { // before decoding: at most 2 bytes of padding
		return
	}
	if len(data) == 0 {
		b.placeholder(path, what, "it holds no data")
		return
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b.placeholder(path, what, "its data is not valid base64")
		return
	}
	if overCap(len(raw)) {
		return
	}
	b.mediaBytes += len(raw)
	b.mediaCount++
	p := part{kind: kind, mime: mime, data: data, name: name}
	if b.caps.followup {
		b.followup = append(b.followup, p)
		b.text("[" + what + ": shown in the user message after the tool results, as " + name + "]")
		b.change(path, Moved, "Chat Completions tool messages take text only: the image is in the follow-up user message")
		return
	}
	b.parts = append(b.parts, p)
}

// describeMedia says what a media block is without its data: its kind,
// MIME type and decoded size.
func describeMedia(kind, mime, data string) string {
	s := kind
	if mime != "" {
		s += ", " + clip(mime, 100)
	}
	return s + ", " + size(decodedSize(data))
}

// decodedSize is the size of base64 data once decoded.
func decodedSize(data string) int {
	n := base64.StdEncoding.DecodedLen(len(data))
	return n - strings.Count(data[max(len(data)-2, 0):], "=")
}

func describeLink(c mcp.Content) string {
	s := "[resource link: " + clip(c.URI, 512)
	if c.Name != "" {
		s += ", name " + strconv.Quote(clip(c.Name, 200))
	}
	if c.Title != "" {
		s += ", title " + strconv.Quote(clip(c.Title, 200))
	}
	if c.MimeType != "" {
		s += ", " + clip(c.MimeType, 100)
	}
	if c.Size != nil {
		s += ", " + size(int(*c.Size))
	}
	s += "]"
	if c.Description != "" {
		s += " " + clip(c.Description, 1000)
	}
	return s
}

func size(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " bytes"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// clip bounds a string the server sent that goes into a description.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return validPrefix(s, n) + "…"
}

func extension(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "application/pdf":
		return ".pdf"
	}
	return ""
}

// fileName is the last segment of uri, for a document's file name.
func fileName(uri, ext string) string {
	s := uri
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	s = clip(s, 100)
	if s == "" {
		s = "document" + ext
	}
	return s
}

func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// joinText joins the text parts the way every target's single string
// does: one blank line between blocks.
func joinText(ps []part) string {
	var sb strings.Builder
	for _, p := range ps {
		if p.kind != partText {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(p.text)
	}
	return sb.String()
}
