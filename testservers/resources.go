package testservers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Resource URIs the test servers offer.
const (
	// StaticTextURI is a text/plain resource whose text is "hello".
	StaticTextURI = "test://static/text"
	// StaticBlobURI is an application/octet-stream resource: the bytes
	// 0x00 to 0x0f, base64-encoded.
	StaticBlobURI = "test://static/blob"
	// ItemTemplate is the resource template; reading
	// test://items/ID returns the text "item ID".
	ItemTemplate = "test://items/{id}"
	// itemsPrefix is ItemTemplate before its variable.
	itemsPrefix = "test://items/"
	// staticItems is how many test://static/item/N resources there are.
	staticItems = 5
)

const staticText = "hello"

var staticBlob = func() []byte {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

type resourceDef struct {
	res      mcp.Resource
	contents mcp.ResourceContents
}

var (
	resources = func() []resourceDef {
		size := func(n int) *int64 { v := int64(n); return &v }
		defs := []resourceDef{
			{
				mcp.Resource{URI: StaticTextURI, Name: "text", Title: "Static text", MimeType: "text/plain", Size: size(len(staticText))},
				mcp.ResourceContents{URI: StaticTextURI, MimeType: "text/plain", Text: staticText},
			},
			{
				mcp.Resource{URI: StaticBlobURI, Name: "blob", Title: "Static blob", MimeType: "application/octet-stream", Size: size(len(staticBlob))},
				mcp.ResourceContents{URI: StaticBlobURI, MimeType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString(staticBlob)},
			},
		}
		for i := 1; i <= staticItems; i++ {
			uri := "test://static/item/" + strconv.Itoa(i)
			text := "static item " + strconv.Itoa(i)
			defs = append(defs, resourceDef{
				mcp.Resource{URI: uri, Name: "item-" + strconv.Itoa(i), MimeType: "text/plain", Size: size(len(text))},
				mcp.ResourceContents{URI: uri, MimeType: "text/plain", Text: text},
			})
		}
		return defs
	}()
	resourceList = func() []mcp.Resource {
		l := make([]mcp.Resource, len(resources))
		for i := range resources {
			l[i] = resources[i].res
		}
		return l
	}()
	templateList = []mcp.ResourceTemplate{{
		URITemplate: ItemTemplate,
		Name:        "item",
		Title:       "Item by id",
		Description: "Any item; its text is \"item ID\".",
		MimeType:    "text/plain",
	}}
)

// ResourceURIs returns the URIs resources/list returns, in its order.
func ResourceURIs() []string {
	uris := make([]string, len(resources))
	for i := range resources {
		uris[i] = resources[i].res.URI
	}
	return uris
}

// lookupResource returns the contents of the resource at uri: a static
// one or an instance of the template.
func lookupResource(uri string) (mcp.ResourceContents, bool) {
	for i := range resources {
		if resources[i].res.URI == uri {
			return resources[i].contents, true
		}
	}
	if id, ok := strings.CutPrefix(uri, itemsPrefix); ok && id != "" && !strings.ContainsAny(id, "/?#") {
		return mcp.ResourceContents{URI: uri, MimeType: "text/plain", Text: "item " + id}, true
	}
	return mcp.ResourceContents{}, false
}

// resourceNotFound is the error for an unknown URI: -32002 in the legacy
// era, -32602 (Invalid params) since 2026-07-28.
func resourceNotFound(uri string, e era) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	code := int64(jsonrpc.CodeResourceNotFound)
	if e == eraStateless {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: "resource not found: " + uri, Data: data}
}

func (ss *Session) listResources(params json.RawMessage, rq *reqInfo) (any, error) {
	list := resourceList
	if rq.era == eraStateless {
		list = statelessResourceList
	}
	items, next, err := page(params, list, ss.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return mcp.ListResourcesResult{Resources: items, NextCursor: next}, nil
}

func (ss *Session) listTemplates(params json.RawMessage) (any, error) {
	items, next, err := page(params, templateList, ss.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	return mcp.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}, nil
}

func (ss *Session) readResource(ctx context.Context, id jsonrpc.ID, params json.RawMessage, rq *reqInfo) (any, error) {
	var p struct {
		mcp.ReadResourceParams
		mrtrParams
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, invalidParams("resources/read: uri is required")
	}
	if rq.era == eraStateless {
		switch p.URI {
		case NonASCIIResourceURI:
			return mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: p.URI, MimeType: "text/plain", Text: "naïve"}}}, nil
		case SecretResourceURI:
			c := ss.newCall(ctx, id, rq, "resources/read", p.URI, p.mrtrParams)
			res, err := ss.readSecret(c)
			if _, ok := errors.AsType[*inputRequired](err); ok {
				ss.srv.count(func(st *Stats) { st.InputRequired[p.URI]++ })
			}
			return res, err
		}
	}
	contents, ok := lookupResource(p.URI)
	if !ok {
		return nil, resourceNotFound(p.URI, rq.era)
	}
	return mcp.ReadResourceResult{Contents: []mcp.ResourceContents{contents}}, nil
}

// subscribe handles resources/subscribe (on) and resources/unsubscribe.
func (ss *Session) subscribe(params json.RawMessage, on bool) (any, error) {
	var p mcp.SubscribeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, invalidParams("uri is required")
	}
	if _, ok := lookupResource(p.URI); !ok {
		return nil, resourceNotFound(p.URI, eraInitialize)
	}
	ss.mu.Lock()
	if on {
		ss.subs[p.URI] = true
	} else {
		delete(ss.subs, p.URI)
	}
	ss.mu.Unlock()
	return struct{}{}, nil
}

// tinyPNG is a 1×1 grey PNG, base64-encoded.
var tinyPNG = func() string {
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	img.SetGray(0, 0, color.Gray{Y: 0x80})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}()

// tinyWAV is eight samples of 8-bit mono silence at 8 kHz, base64-encoded.
var tinyWAV = func() string {
	const samples, rate = 8, 8000
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // channels
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples))
	return base64.StdEncoding.EncodeToString(b.Bytes())
}()
