package genaimcp

import (
	"context"
	"encoding/json"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/fakemodel"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/internal/exact"
	"github.com/anymcp/anymcp/llmsdk/internal/sdktest"
	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(t *testing.T, fm *fakemodel.Server) *genai.Client {
	t.Helper()
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "gem-test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: fm.GeminiBase()}})
	if err != nil {
		t.Fatal(err)
	}
	return gc
}

// TestToolsExact: every tool of the corpus, converted for Gemini
// (parametersJsonSchema, and the OpenAPI-subset parameters), goes through
// the SDK's types and out of the real SDK client as the same JSON the core
// emitted.
func TestToolsExact(t *testing.T) {
	corpus := sdktest.Corpus(t)
	for _, p := range []llm.Provider{llm.Gemini, llm.GeminiOpenAPI} {
		target := llm.Target{Provider: p}
		defs := llm.RequestTools(target, llm.ConvertAll(nil, corpus, target))
		tools, err := Tools(defs)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fm := fakemodel.New(t, fakemodel.Turn{Text: "ok"})
		gc := newClient(t, fm)
		_, err = gc.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("hi"), &genai.GenerateContentConfig{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if sent := sdktest.Field(t, fm.Requests()[0].Body, "tools"); !exact.Equal(sent, defs) {
			t.Errorf("%s: the SDK sent other tools than the core emitted:\n sent %.600s\n core %.600s", p, sent, defs)
		}
	}
}

// TestCallsAndParts: the model's function calls come out as (id, name,
// args); a result goes back as the core's functionResponse part.
func TestCallsAndParts(t *testing.T) {
	fm := fakemodel.New(t,
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "add", Args: `{"a":1,"b":2}`}}},
		fakemodel.Turn{Text: "3"},
	)
	gc := newClient(t, fm)
	ctx := context.Background()
	contents := genai.Text("1+2?")
	resp, err := gc.Models.GenerateContent(ctx, "gemini-test", contents, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := Calls(resp)
	if err != nil || len(calls) != 1 || calls[0].Name != "add" || !exact.Equal(calls[0].Args, []byte(`{"a":1,"b":2}`)) {
		t.Fatalf("calls %+v (%v)", calls, err)
	}
	result := json.RawMessage(`{"functionResponse":{"name":"add","response":{"output":"3"},"parts":[{"inlineData":{"mimeType":"image/png","data":"AAAA","displayName":"x.png"}}]}}`)
	p, err := Part(llm.ToolResult{Message: result})
	if err != nil {
		t.Fatal(err)
	}
	contents = append(contents, resp.Candidates[0].Content, genai.NewContentFromParts([]*genai.Part{p}, genai.RoleUser))
	if _, err := gc.Models.GenerateContent(ctx, "gemini-test", contents, nil); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Contents []struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := fm.Requests()[1].Decode(&sent); err != nil || len(sent.Contents) != 3 {
		t.Fatalf("sent %s (%v)", fm.Requests()[1].Body, err)
	}
	if got := sent.Contents[2].Parts[0]; !exact.Equal(got, result) {
		t.Errorf("sent %s, want %s", got, result)
	}
}

// TestToolLoop: a whole loop with the real SDK client: the model calls a
// test server's add tool, Answer runs it through a Toolbox, and the next
// request carries its functionResponse.
func TestToolLoop(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tb, err := llm.NewToolbox(ctx, llm.FromConn(conn), llm.Target{Provider: llm.Gemini}, llm.ToolboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Tools(tb.Definitions())
	if err != nil {
		t.Fatal(err)
	}
	fm := fakemodel.New(t,
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "add", Args: `{"a":2,"b":3}`}}},
		fakemodel.Turn{Text: "5"},
	)
	gc := newClient(t, fm)
	contents := genai.Text("2+3?")
	var final string
	for range 3 {
		resp, err := gc.Models.GenerateContent(ctx, "gemini-test", contents, &genai.GenerateContentConfig{Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.FunctionCalls()) == 0 {
			final = resp.Text()
			break
		}
		answer, err := Answer(ctx, tb, resp)
		if err != nil {
			t.Fatal(err)
		}
		contents = append(contents, resp.Candidates[0].Content, answer)
	}
	if final != "5" {
		t.Errorf("final answer %q", final)
	}
	var sent struct {
		Contents []struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if err := fm.Requests()[1].Decode(&sent); err != nil || len(sent.Contents) != 3 {
		t.Fatalf("sent %s (%v)", fm.Requests()[1].Body, err)
	}
	if got := sent.Contents[2].Parts[0]; !exact.Equal(got, []byte(`{"functionResponse":{"name":"add","response":{"output":"2+3=5"}}}`)) {
		t.Errorf("the second request carried %s", got)
	}
}
