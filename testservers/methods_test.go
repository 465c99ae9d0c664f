package testservers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// frontEnds starts each front-end with opts and returns an initialized
// wire to it and its core.
var frontEnds = []struct {
	name  string
	start func(t *testing.T, opts Options) (wire, *Server)
}{
	{"http-sse", func(t *testing.T, opts Options) (wire, *Server) {
		s := StartStreamable(HTTPOptions{Options: opts})
		t.Cleanup(s.Close)
		w := newHTTPWire(t, s.URL)
		w.initialize(t)
		return w, s.Server()
	}},
	{"http-json", func(t *testing.T, opts Options) (wire, *Server) {
		s := StartStreamable(HTTPOptions{Options: opts, JSONResponse: true})
		t.Cleanup(s.Close)
		w := newHTTPWire(t, s.URL)
		w.initialize(t)
		return w, s.Server()
	}},
	{"stdio", func(t *testing.T, opts Options) (wire, *Server) {
		w := newStdioWire(t, context.Background(), opts)
		w.initialize(t)
		return w, w.srv
	}},
}

func TestMethods(t *testing.T) {
	for _, fe := range frontEnds {
		t.Run(fe.name, func(t *testing.T) {
			w, srv := fe.start(t, Options{})
			id := 1
			req := func(method, params string) *jsonrpc.Message {
				t.Helper()
				id++
				m, _ := w.request(t, id, method, params)
				return m
			}
			callTool := func(name, args string) (string, bool) {
				t.Helper()
				return toolText(t, req("tools/call", `{"name":"`+name+`","arguments":`+args+`}`))
			}

			if m := req("ping", ""); string(m.Result) != "{}" {
				t.Errorf("ping: %s", m.Result)
			}

			tl := result[mcp.ListToolsResult](t, req("tools/list", ""))
			var names []string
			for _, tool := range tl.Tools {
				names = append(names, tool.Name)
				if len(tool.InputSchema) == 0 {
					t.Errorf("tool %s has no inputSchema", tool.Name)
				}
			}
			if !slices.Equal(names, ToolNames()) || tl.NextCursor != "" {
				t.Errorf("tools/list: %v %q", names, tl.NextCursor)
			}
			for _, tool := range tl.Tools {
				readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint != nil && *tool.Annotations.ReadOnlyHint
				if want := tool.Name == "echo" || tool.Name == "add"; readOnly != want {
					t.Errorf("%s: readOnlyHint %v", tool.Name, readOnly)
				}
				if (len(tool.OutputSchema) > 0) != (tool.Name == "add") {
					t.Errorf("%s: outputSchema %s", tool.Name, tool.OutputSchema)
				}
			}

			if text, isErr := callTool("echo", `{"text":"héllo"}`); text != "héllo" || isErr {
				t.Errorf("echo: %q %v", text, isErr)
			}
			add := req("tools/call", `{"name":"add","arguments":{"a":2,"b":3.5}}`)
			if text, _ := toolText(t, add); text != "2+3.5=5.5" {
				t.Errorf("add: %q", text)
			}
			if sc := result[mcp.CallToolResult](t, add).StructuredContent; string(sc) != `{"sum":5.5}` {
				t.Errorf("add structuredContent: %s", sc)
			}
			if text, isErr := callTool("fail", `{"message":"boom"}`); text != "boom" || !isErr {
				t.Errorf("fail: %q %v", text, isErr)
			}
			if text, isErr := callTool("echo", `{"text":5}`); !isErr || !strings.Contains(text, "invalid arguments") {
				t.Errorf("echo with a number: %q %v", text, isErr)
			}
			if text, _ := callTool("big", `{"mib":1}`); len(text) != 1<<20 || strings.Trim(text, "x") != "" {
				t.Errorf("big: %d bytes", len(text))
			}
			ct := result[mcp.CallToolResult](t, req("tools/call", `{"name":"content_types"}`))
			var types []string
			for _, c := range ct.Content {
				types = append(types, c.Type)
			}
			if !slices.Equal(types, []string{"text", "image", "audio", "resource_link", "resource"}) {
				t.Errorf("content_types: %v", types)
			}
			if png, _ := base64.StdEncoding.DecodeString(ct.Content[1].Data); !strings.HasPrefix(string(png), "\x89PNG") {
				t.Errorf("image is not a PNG: %q", ct.Content[1].Data)
			}
			if wav, _ := base64.StdEncoding.DecodeString(ct.Content[2].Data); !strings.HasPrefix(string(wav), "RIFF") || !strings.Contains(string(wav), "WAVE") {
				t.Errorf("audio is not a WAV: %q", ct.Content[2].Data)
			}
			if ct.Content[4].Resource == nil || ct.Content[4].Resource.Text != "hello" {
				t.Errorf("embedded resource: %+v", ct.Content[4].Resource)
			}
			for want := 1; want <= 2; want++ {
				if text, _ := callTool("counter", `{}`); text != string(rune('0'+want)) {
					t.Errorf("counter: %q, want %d", text, want)
				}
			}
			wantErrorCode(t, req("tools/call", `{"name":"nope","arguments":{}}`), jsonrpc.CodeInvalidParams)
			wantErrorCode(t, req("tools/call", `[1,2]`), jsonrpc.CodeInvalidParams)
			wantErrorCode(t, req("tools/call", `{}`), jsonrpc.CodeInvalidParams)

			rl := result[mcp.ListResourcesResult](t, req("resources/list", ""))
			var uris []string
			for _, r := range rl.Resources {
				uris = append(uris, r.URI)
			}
			if !slices.Equal(uris, ResourceURIs()) || len(uris) != 7 {
				t.Errorf("resources/list: %v", uris)
			}
			tpl := result[mcp.ListResourceTemplatesResult](t, req("resources/templates/list", "{}"))
			if len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != ItemTemplate {
				t.Errorf("resources/templates/list: %+v", tpl)
			}
			read := func(uri string) mcp.ResourceContents {
				t.Helper()
				r := result[mcp.ReadResourceResult](t, req("resources/read", `{"uri":"`+uri+`"}`))
				if len(r.Contents) != 1 || r.Contents[0].URI != uri {
					t.Fatalf("read %s: %+v", uri, r)
				}
				return r.Contents[0]
			}
			if c := read(StaticTextURI); c.Text != "hello" || c.MimeType != "text/plain" {
				t.Errorf("text resource: %+v", c)
			}
			if c := read(StaticBlobURI); c.Blob != base64.StdEncoding.EncodeToString(staticBlob) || c.MimeType != "application/octet-stream" {
				t.Errorf("blob resource: %+v", c)
			}
			if c := read("test://items/42"); c.Text != "item 42" {
				t.Errorf("template resource: %+v", c)
			}
			notFound := req("resources/read", `{"uri":"test://nowhere"}`)
			wantErrorCode(t, notFound, jsonrpc.CodeResourceNotFound)
			if string(notFound.Error.Data) != `{"uri":"test://nowhere"}` {
				t.Errorf("not found data: %s", notFound.Error.Data)
			}
			wantErrorCode(t, req("resources/read", `{}`), jsonrpc.CodeInvalidParams)

			if m := req("resources/subscribe", `{"uri":"test://items/7"}`); m.Error != nil {
				t.Errorf("subscribe: %v", m.Error)
			}
			req("resources/subscribe", `{"uri":"`+StaticTextURI+`"}`)
			if got := srv.Stats().Subscriptions; !slices.Equal(got, []string{"test://items/7", StaticTextURI}) {
				t.Errorf("subscriptions: %v", got)
			}
			req("resources/unsubscribe", `{"uri":"test://items/7"}`)
			if got := srv.Stats().Subscriptions; !slices.Equal(got, []string{StaticTextURI}) {
				t.Errorf("subscriptions after unsubscribe: %v", got)
			}
			wantErrorCode(t, req("resources/subscribe", `{"uri":"test://nowhere"}`), jsonrpc.CodeResourceNotFound)

			pl := result[mcp.ListPromptsResult](t, req("prompts/list", ""))
			if len(pl.Prompts) != 2 || pl.Prompts[0].Name != "greet" || !pl.Prompts[0].Arguments[0].Required {
				t.Errorf("prompts/list: %+v", pl)
			}
			greet := result[mcp.GetPromptResult](t, req("prompts/get", `{"name":"greet","arguments":{"name":"Ann","style":"formal"}}`))
			if len(greet.Messages) != 1 || greet.Messages[0].Role != "user" || greet.Messages[0].Content.Text != "Please greet Ann in a formal style." {
				t.Errorf("greet: %+v", greet)
			}
			if simple := result[mcp.GetPromptResult](t, req("prompts/get", `{"name":"simple"}`)); len(simple.Messages) != 1 {
				t.Errorf("simple: %+v", simple)
			}
			wantErrorCode(t, req("prompts/get", `{"name":"greet"}`), jsonrpc.CodeInvalidParams)
			wantErrorCode(t, req("prompts/get", `{"name":"nope"}`), jsonrpc.CodeInvalidParams)

			complete := func(ref, arg, value string) []string {
				t.Helper()
				r := result[mcp.CompleteResult](t, req("completion/complete", `{"ref":`+ref+`,"argument":{"name":"`+arg+`","value":"`+value+`"}}`))
				return r.Completion.Values
			}
			if got := complete(`{"type":"ref/prompt","name":"greet"}`, "style", "f"); !slices.Equal(got, []string{"formal", "friendly", "funny"}) {
				t.Errorf("complete style f: %v", got)
			}
			if got := complete(`{"type":"ref/prompt","name":"greet"}`, "style", "fr"); !slices.Equal(got, []string{"friendly"}) {
				t.Errorf("complete style fr: %v", got)
			}
			if got := complete(`{"type":"ref/resource","uri":"test://items/{id}"}`, "id", "2"); !slices.Equal(got, []string{"2", "20"}) {
				t.Errorf("complete id 2: %v", got)
			}
			if got := complete(`{"type":"ref/prompt","name":"greet"}`, "name", ""); len(got) != 0 {
				t.Errorf("complete name: %v", got)
			}
			wantErrorCode(t, req("completion/complete", `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"x","value":""}}`), jsonrpc.CodeInvalidParams)

			if m := req("logging/setLevel", `{"level":"warning"}`); m.Error != nil {
				t.Errorf("setLevel: %v", m.Error)
			}
			wantErrorCode(t, req("logging/setLevel", `{"level":"loud"}`), jsonrpc.CodeInvalidParams)
			wantErrorCode(t, req("no/such/method", `{}`), jsonrpc.CodeMethodNotFound)

			st := srv.Stats()
			if st.ToolCalls["counter"] != 2 || st.Counter != 2 || st.ToolCalls["echo"] != 2 {
				t.Errorf("stats tool calls: %v counter %d", st.ToolCalls, st.Counter)
			}
			if st.Requests["ping"] != 1 || st.Initializations != 1 || st.Initialized != 1 || st.Sessions != 1 {
				t.Errorf("stats: %+v", st)
			}
			if st.ProtocolVersion != mcp.Version20251125 || st.ClientInfo.Name != "raw-test" || st.ClientCapabilities.Sampling == nil {
				t.Errorf("stats of initialize: %+v", st)
			}
			if st.LogLevel != mcp.LevelWarning {
				t.Errorf("stats log level: %q", st.LogLevel)
			}
		})
	}
}

func TestInitializeVersions(t *testing.T) {
	tests := []struct {
		versions  []string
		requested string
		want      string
	}{
		{nil, "2025-11-25", "2025-11-25"},
		{nil, "2025-06-18", "2025-06-18"},
		{nil, "2025-03-26", "2025-03-26"},
		{nil, "2024-11-05", "2024-11-05"},
		{nil, "1999-01-01", "2025-11-25"},
		{[]string{"2025-06-18", "2025-03-26"}, "2025-11-25", "2025-06-18"},
		{[]string{"2025-06-18", "2025-03-26"}, "2025-03-26", "2025-03-26"},
	}
	for _, tt := range tests {
		t.Run(tt.requested, func(t *testing.T) {
			w := newStdioWire(t, context.Background(), Options{Versions: tt.versions, Name: "n", Instructions: "be nice"})
			m, _ := w.request(t, 1, "initialize", `{"protocolVersion":"`+tt.requested+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
			r := result[mcp.InitializeResult](t, m)
			if r.ProtocolVersion != tt.want {
				t.Errorf("protocolVersion %q, want %q", r.ProtocolVersion, tt.want)
			}
			if r.ServerInfo.Name != "n" || r.Instructions != "be nice" {
				t.Errorf("serverInfo %+v instructions %q", r.ServerInfo, r.Instructions)
			}
			c := r.Capabilities
			if c.Tools == nil || !c.Tools.ListChanged || c.Resources == nil || !c.Resources.Subscribe || !c.Resources.ListChanged ||
				c.Prompts == nil || !c.Prompts.ListChanged || c.Logging == nil || c.Completions == nil {
				t.Errorf("capabilities %+v", c)
			}
			if got := w.srv.Stats(); got.ProtocolVersion != tt.want || got.RequestedVersion != tt.requested {
				t.Errorf("stats: %q %q", got.ProtocolVersion, got.RequestedVersion)
			}
		})
	}
	t.Run("missing version", func(t *testing.T) {
		w := newStdioWire(t, context.Background(), Options{})
		m, _ := w.request(t, 1, "initialize", `{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
		wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	})
}

func TestPagination(t *testing.T) {
	for _, size := range []int{1, 2, 5, 100} {
		w := newStdioWire(t, context.Background(), Options{PageSize: size})
		w.initialize(t)
		collect := func(method, field string) []string {
			t.Helper()
			var all []string
			cursor := ""
			for pages := 1; ; pages++ {
				params := "{}"
				if cursor != "" {
					params = `{"cursor":"` + cursor + `"}`
				}
				m, _ := w.request(t, pages, method, params)
				var r map[string]json.RawMessage
				if err := json.Unmarshal(result[json.RawMessage](t, m), &r); err != nil {
					t.Fatal(err)
				}
				var items []map[string]any
				if err := json.Unmarshal(r[field], &items); err != nil {
					t.Fatalf("%s: %s", method, m.Result)
				}
				if len(items) > size || len(items) == 0 {
					t.Fatalf("%s page %d has %d items (page size %d)", method, pages, len(items), size)
				}
				for _, it := range items {
					key := "name"
					if field == "resourceTemplates" {
						key = "uriTemplate"
					}
					all = append(all, it[key].(string))
				}
				_ = json.Unmarshal(r["nextCursor"], &cursor)
				if r["nextCursor"] == nil {
					return all
				}
				if pages > 50 {
					t.Fatal("pagination does not end")
				}
			}
		}
		if got := collect("tools/list", "tools"); !slices.Equal(got, ToolNames()) {
			t.Errorf("size %d: tools %v", size, got)
		}
		if got := collect("resources/list", "resources"); len(got) != 7 {
			t.Errorf("size %d: resources %v", size, got)
		}
		if got := collect("resources/templates/list", "resourceTemplates"); len(got) != 1 {
			t.Errorf("size %d: templates %v", size, got)
		}
		if got := collect("prompts/list", "prompts"); !slices.Equal(got, []string{"greet", "simple"}) {
			t.Errorf("size %d: prompts %v", size, got)
		}
		for _, bad := range []string{"garbage", base64.RawURLEncoding.EncodeToString([]byte("offset:3")), encodeCursor(999)} {
			m, _ := w.request(t, 99, "tools/list", `{"cursor":"`+bad+`"}`)
			wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
		}
	}
}
