package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// How mcpcall answers what a server asks of its client: roots/list,
// elicitation/create and sampling/createMessage. The same handlers serve a
// 2025 server's requests and a 2026-07-28 server's input_required results
// (the library sends them either way).

// answerFlags are the flags that say how mcpcall answers the server.
type answerFlags struct {
	roots       []string         // --root DIR
	elicit      string           // --elicit JSON|@file|accept|decline|cancel
	samplingCmd string           // --sampling-cmd CMD
	samplingLLM samplingLLMFlags // --sampling-llm API, --sampling-model NAME (samplingllm.go)
}

// answerOptions are the client options that answer the server's requests
// as the flags say.
func (c *cli) answerOptions() ([]client.Option, error) {
	opts := []client.Option{
		client.WithElicitation(c.elicitForm),
		client.WithURLElicitation(c.elicitURL),
		client.WithSampling(c.sample),
	}
	if err := c.startSamplingLLM(); err != nil {
		return nil, err
	}
	if c.answers.samplingLLM.sampler != nil {
		opts = append(opts, client.WithSamplingTools()) // the model answers with tool calls
	}
	if len(c.answers.roots) > 0 {
		roots, err := rootsOf(c.answers.roots)
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.WithRoots(func(context.Context) ([]mcp.Root, error) { return roots, nil }))
	}
	if e := c.answers.elicit; e != "" && !isElicitAction(e) {
		raw, err := readJSONArg("--elicit", e, c.stdin)
		if err != nil {
			return nil, err
		}
		c.answers.elicit = string(raw) // read once, used for every request
	}
	return opts, nil
}

// rootsOf makes the roots of --root directories: file URIs of their
// absolute paths, named by their last element.
func rootsOf(dirs []string) ([]mcp.Root, error) {
	roots := make([]mcp.Root, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usageErr("--root %s: %v", d, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, usageErr("--root %s: %v", d, err)
		}
		if !fi.IsDir() {
			return nil, usageErr("--root %s: not a directory", d)
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		roots = append(roots, mcp.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
	return roots, nil
}

// errSamplingDeclined is the answer to sampling without --sampling-cmd:
// the code the specification gives a user's refusal.
var errSamplingDeclined = &jsonrpc.Error{Code: -1, Message: "sampling declined: mcpcall has no model to ask (see --sampling-cmd)"}

// maxSamplingOutput bounds what --sampling-cmd may print.
const maxSamplingOutput = 4 << 20

// sample answers sampling/createMessage: declined, with --sampling-llm's
// model, or with --sampling-cmd.
func (c *cli) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if s := c.answers.samplingLLM.sampler; s != nil {
		return s.CreateMessage(ctx, p)
	}
	if c.answers.samplingCmd == "" {
		c.log.Warn("declined the server's request for an LLM completion (sampling/createMessage): give --sampling-cmd CMD to answer it with a command, or --sampling-llm openai|anthropic to ask a model")
		return nil, errSamplingDeclined
	}
	in, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	out, stderr, err := runSamplingCmd(ctx, c.answers.samplingCmd, in)
	if err != nil {
		// What the command wrote on stderr is for the person running
		// mcpcall (it may name a key, a path, a host of theirs), and is
		// shown here, scrubbed as all output is; the server is told only
		// that the command failed, and how it ended.
		attrs := []any{"err", err}
		if stderr != "" {
			attrs = append(attrs, "stderr", stderr)
		}
		c.log.Warn("--sampling-cmd failed (its stderr is not sent to the server)", attrs...)
		return nil, fmt.Errorf("--sampling-cmd failed: %w", err)
	}
	return samplingResult(out)
}

// runSamplingCmd runs cmd with sh -c, in a process group of its own that
// is killed when ctx ends, with in on its stdin, and returns its stdout,
// and on failure the end of its stderr.
func runSamplingCmd(ctx context.Context, cmd string, in []byte) (out []byte, stderrTail string, err error) {
	x := exec.CommandContext(ctx, "sh", "-c", cmd)
	x.Stdin = bytes.NewReader(in)
	var stdout, stderr limitedBuffer
	stdout.limit, stderr.limit = maxSamplingOutput, 4<<10
	x.Stdout, x.Stderr = &stdout, &stderr
	x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	x.Cancel = func() error { return syscall.Kill(-x.Process.Pid, syscall.SIGKILL) }
	x.WaitDelay = time.Second
	if err := x.Run(); err != nil {
		return nil, strings.TrimSpace(stderr.String()), err
	}
	if stdout.over {
		return nil, "", fmt.Errorf("its answer is longer than %d bytes", maxSamplingOutput)
	}
	return stdout.Bytes(), "", nil
}

// samplingResult reads what --sampling-cmd printed: a CreateMessageResult
// JSON object (role and model filled in when missing), or plain text.
func samplingResult(out []byte) (*mcp.CreateMessageResult, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 {
		return nil, errors.New("--sampling-cmd printed nothing")
	}
	res := &mcp.CreateMessageResult{Role: "assistant", Model: "mcpcall --sampling-cmd"}
	if trimmed[0] == '{' {
		if err := json.Unmarshal(trimmed, res); err != nil {
			return nil, fmt.Errorf("--sampling-cmd printed an object that is no CreateMessageResult: %w", err)
		}
		if len(res.Content) == 0 {
			return nil, errors.New("--sampling-cmd printed a result without content")
		}
		return res, nil
	}
	res.Content = mcp.Contents{mcp.TextContent(strings.TrimRight(string(out), "\n"))}
	res.StopReason = "endTurn"
	return res, nil
}

// limitedBuffer keeps at most limit bytes and notes that more came.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); len(p) > room {
		b.over = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// prompter reads a person's answers from the terminal, one line per
// question, on a goroutine of its own, so that a question given up (the
// call ended) does not leave a read in the way of the next one.
type prompter struct {
	mu    sync.Mutex // one elicitation at a time
	start sync.Once
	asks  chan chan promptLine // each ask gets the next line
	quit  chan struct{}        // closed by stop
	ended chan struct{}        // closed when the goroutine is gone
	once  sync.Once            // closes quit
	stdin io.Reader
}

type promptLine struct {
	s   string
	err error
}

func newPrompter(stdin io.Reader) *prompter {
	return &prompter{asks: make(chan chan promptLine), quit: make(chan struct{}), ended: make(chan struct{}), stdin: stdin}
}

// readLine reads one line (without its newline); io.EOF when stdin ends
// (Ctrl-D). ctx ending (the call given up) abandons the question.
func (p *prompter) readLine(ctx context.Context) (string, error) {
	p.start.Do(func() { go p.run() })
	reply := make(chan promptLine, 1)
	select {
	case p.asks <- reply:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	case <-p.ended:
		return "", io.EOF
	}
	select {
	case l := <-reply:
		return l.s, l.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// run answers each ask with the next line, until stdin ends or stop.
func (p *prompter) run() {
	defer close(p.ended)
	in := bufio.NewReader(p.stdin)
	for {
		var reply chan promptLine
		select {
		case reply = <-p.asks:
		case <-p.quit:
			return
		}
		s, err := in.ReadString('\n')
		if err != nil && s != "" {
			err = nil // a last line without a newline
		}
		reply <- promptLine{strings.TrimRight(s, "\r\n"), err}
		if err != nil {
			return
		}
	}
}

// stop ends the reading goroutine once it is between questions.
func (p *prompter) stop() {
	p.once.Do(func() { close(p.quit) })
}

// interactive reports whether mcpcall may ask a person: stdin and stderr
// are a terminal, and stderr is not kept to JSON lines (--json).
func (c *cli) interactive() bool { return c.stdinTTY && c.stderrTTY && !c.f.json }
