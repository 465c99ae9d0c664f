// Command openaihost is a complete AI host: it hands the tools of an MCP
// server (or of every server of an mcpServers config file) to a model
// behind any OpenAI-compatible Chat Completions endpoint, with the
// official openai-go SDK, and runs the tool loop until the model answers
// in text, which it prints.
//
// The endpoint and model come from flags or OPENAI_BASE_URL and
// OPENAI_MODEL; the key from OPENAI_API_KEY only (never a flag, which a
// shell history keeps). A local model server works:
//
//	ollama serve & ollama pull qwen3
//	OPENAI_BASE_URL=http://127.0.0.1:11434/v1 go run ./llmsdk/examples/openaihost -model qwen3 -compatible 'What is 2+3? Use a tool.'
//	go run ./llmsdk/examples/openaihost -server http://127.0.0.1:8080/mcp 'What is 2+3?'
//	go run ./llmsdk/examples/openaihost -config ~/.cursor/mcp.json -max-tokens 2000 'Read README.md'
//
// Without -server or -config it starts the repository's test server and
// uses its tools (echo, add, ...).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/llm"
	"github.com/anymcp/anymcp/llmsdk/openaimcp"
	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/testservers"
)

// config is what a run needs; main fills it from flags and environment.
type config struct {
	baseURL, key, model string
	server              string // an MCP server's URL
	configFile          string // or the servers of an mcpServers file
	compatible, strict  bool
	budget              int // tokens the tool definitions may cost (0: no budget)
	maxTurns            int
	prompt              string
}

func main() {
	var c config
	flag.StringVar(&c.baseURL, "base-url", os.Getenv("OPENAI_BASE_URL"), "the Chat Completions endpoint's base URL, with /v1 (default $OPENAI_BASE_URL, else OpenAI's)")
	flag.StringVar(&c.model, "model", os.Getenv("OPENAI_MODEL"), "the model (default $OPENAI_MODEL)")
	flag.StringVar(&c.server, "server", "", "an MCP server's URL")
	flag.StringVar(&c.configFile, "config", "", "an mcpServers config file: every server in it, as a fleet")
	flag.BoolVar(&c.compatible, "compatible", false, "convert the tools for OpenAI-compatible servers (Ollama, vLLM, llama.cpp)")
	flag.BoolVar(&c.strict, "strict", false, "ask for strict function calling where a tool can be made strict")
	flag.IntVar(&c.budget, "max-tokens", 0, "the tokens the tool definitions may cost; above it the model searches the tools (0: no budget)")
	flag.IntVar(&c.maxTurns, "turns", 10, "the most model turns")
	flag.Parse()
	c.key = os.Getenv("OPENAI_API_KEY")
	c.prompt = strings.Join(flag.Args(), " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "openaihost:", err)
		os.Exit(1)
	}
}

// run is the host: MCP tools → Toolbox → openai-go → tool calls → Toolbox
// → the model again, until it answers in text (printed on out; each tool
// call is told on log).
func run(ctx context.Context, c config, out, log io.Writer) error {
	if c.model == "" || c.prompt == "" {
		return errors.New("give a model (-model or OPENAI_MODEL) and a prompt")
	}
	src, closeSrc, err := source(ctx, c)
	if err != nil {
		return err
	}
	defer closeSrc()
	target := llm.Target{Provider: llm.OpenAIChat, Strict: c.strict}
	if c.compatible {
		target.Provider = llm.OpenAICompatible
	}
	tb, err := llm.NewToolbox(ctx, src, target, llm.ToolboxOptions{Budget: c.budget})
	if err != nil {
		return err
	}
	for _, r := range tb.Report() {
		if r.Mode != llm.ModeStrict && (c.strict || r.Mode == llm.ModeOmitted) {
			fmt.Fprintf(log, "tool %s: %s (%d changes)\n", r.Name, r.Mode, len(r.Changes))
		}
	}

	opts := []option.RequestOption{option.WithAPIKey(c.key)}
	if c.baseURL != "" {
		opts = append(opts, option.WithBaseURL(c.baseURL))
	}
	oc := openai.NewClient(opts...)
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(c.prompt)}
	for turn := 0; turn < c.maxTurns; turn++ {
		// Asked each turn: a tool the model reads under a budget is
		// appended to the definitions.
		tools, err := openaimcp.ChatTools(tb.Definitions())
		if err != nil {
			return err
		}
		comp, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: c.model, Messages: msgs, Tools: tools})
		if err != nil {
			return err
		}
		if len(comp.Choices) == 0 {
			return errors.New("the model answered with no choice")
		}
		msg := comp.Choices[0].Message
		calls := openaimcp.ChatCalls(msg)
		if len(calls) == 0 {
			fmt.Fprintln(out, msg.Content)
			return nil
		}
		msgs = append(msgs, msg.ToParam())
		for _, call := range calls {
			fmt.Fprintf(log, "→ %s %s\n", call.Name, call.Args)
		}
		answers, err := openaimcp.AnswerChat(ctx, tb, msg)
		if err != nil {
			return err // a server gone, or a call whose outcome is unknown
		}
		msgs = append(msgs, answers...)
	}
	return fmt.Errorf("no answer after %d turns", c.maxTurns)
}

// source is where the tools come from: one server, the servers of a
// config file, or the test server.
func source(ctx context.Context, c config) (llm.Source, func(), error) {
	if c.configFile != "" {
		places := mcpconfig.DefaultPlaces()
		entries, problems := places.Load([]mcpconfig.Location{places.File(c.configFile)})
		if len(problems) > 0 {
			return nil, nil, problems[0]
		}
		servers, _ := fleet.FromConfig(entries, fleet.ConfigOptions{})
		f, err := fleet.New(servers)
		if err != nil {
			return nil, nil, err
		}
		return llm.FromFleet(f), func() { f.Close() }, nil
	}
	url, stop := c.server, func() {}
	if url == "" {
		srv := testservers.StartStreamable(testservers.HTTPOptions{})
		url, stop = srv.URL, srv.Close
	}
	conn, err := client.Dial(ctx, client.URL(url))
	if err != nil {
		stop()
		return nil, nil, err
	}
	return llm.FromConn(conn), func() { conn.Close(); stop() }, nil
}
