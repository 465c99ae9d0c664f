package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/mcp"
)

// SamplingConfig says which model endpoint a Sampler asks, and how. It is
// explicit: the library reads no environment variable (mcpcall's
// --sampling-llm reads OPENAI_API_KEY, ANTHROPIC_BASE_URL and the like).
type SamplingConfig struct {
	// Provider is the API spoken: OpenAIChat, OpenAICompatible (Chat
	// Completions as local model servers take it) or Anthropic.
	Provider Provider
	// BaseURL is the endpoint, as the providers' SDKs take it: the API
	// root with /v1 for OpenAI ("https://api.openai.com/v1", the default;
	// "http://127.0.0.1:11434/v1" for Ollama), without for Anthropic
	// ("https://api.anthropic.com", the default). Required for
	// OpenAICompatible. The key is sent to its origin only.
	BaseURL string
	// APIKey is sent as a bearer token (OpenAI) or x-api-key (Anthropic);
	// empty sends none. It is never logged nor put in an error.
	APIKey string
	// Model is the model asked for when no preference picks one of Models.
	// Empty: Models[0].
	Model string
	// Models are the models the server's modelPreferences may choose
	// among (ChooseModel).
	Models []Model
	// MaxTokens, when > 0, caps the maxTokens a server asks for, and is
	// used when it asks for none.
	MaxTokens int
	// MaxResponse bounds the answer's body in bytes (default 8 MiB).
	MaxResponse int64
	// Header is added to every request (OpenAI-Organization, say).
	Header http.Header
	// HTTPClient sends the requests (nil: http.DefaultClient). Its
	// redirects are held to the endpoint's origin.
	HTTPClient *http.Client
	// Logger gets a debug record per request: provider, origin, model,
	// status, time; never the key nor the messages. Nil logs nothing.
	Logger *slog.Logger
}

// Model is a model a Sampler may choose, rated for the server's
// priorities: each rating from 0 to 1, higher is better (Cheapness 1 is
// the cheapest model, Speed 1 the fastest, Intelligence 1 the ablest).
type Model struct {
	Name                           string
	Cheapness, Speed, Intelligence float64
}

// DefaultMaxResponse bounds a model's answer when SamplingConfig sets no
// MaxResponse.
const DefaultMaxResponse = 8 << 20

// defaultMaxTokens is sent when the server asks for no maxTokens and the
// config sets none: Anthropic refuses a request without max_tokens.
const defaultMaxTokens = 1024

// Sampler answers sampling/createMessage through a model's API.
// s.CreateMessage is a client.SamplingHandler; s.CreateMessageFor is what
// fleet.WithSampling takes. A Sampler is safe for concurrent use.
type Sampler struct {
	cfg      SamplingConfig
	endpoint *url.URL
	client   *http.Client
}

// NewSampler checks cfg and returns a Sampler, or a *SamplingConfigError.
func NewSampler(cfg SamplingConfig) (*Sampler, error) {
	bad := func(field, why string) error { return &SamplingConfigError{Field: field, Why: why} }
	path := "/chat/completions"
	switch cfg.Provider {
	case OpenAIChat:
		if cfg.BaseURL == "" {
			cfg.BaseURL = "https://api.openai.com/v1"
		}
	case OpenAICompatible:
		if cfg.BaseURL == "" {
			return nil, bad("BaseURL", "an OpenAI-compatible endpoint has no default URL")
		}
	case Anthropic:
		if cfg.BaseURL == "" {
			cfg.BaseURL = "https://api.anthropic.com"
		}
		path = "/v1/messages"
	default:
		return nil, bad("Provider", fmt.Sprintf("sampling speaks the Chat Completions and Messages APIs (%q, %q, %q), not %q", OpenAIChat, OpenAICompatible, Anthropic, cfg.Provider))
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, bad("BaseURL", "not an http(s) URL without user information or query")
	}
	u = u.JoinPath(path)
	if cfg.Model == "" && len(cfg.Models) > 0 {
		cfg.Model = cfg.Models[0].Name
	}
	if cfg.Model == "" {
		return nil, bad("Model", "no model named")
	}
	for _, m := range cfg.Models {
		if m.Name == "" {
			return nil, bad("Models", "a model without a name")
		}
	}
	if cfg.MaxResponse <= 0 {
		cfg.MaxResponse = DefaultMaxResponse
	}
	cfg.Models = append([]Model(nil), cfg.Models...)
	cfg.Header = cfg.Header.Clone()
	return &Sampler{cfg: cfg, endpoint: u, client: origin.Guard(cfg.HTTPClient)}, nil
}

// CreateMessage answers one sampling/createMessage request: it maps the
// messages, system prompt, limits, tools and tool choice onto the
// provider's API, asks the model ChooseModel picks, and maps the answer
// back (text, tool_use blocks, stopReason). What is not mapped is in
// docs/llm-hosts.md.
func (s *Sampler) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if p == nil {
		return nil, &SamplingContentError{Why: "no params"}
	}
	model := s.ChooseModel(p.ModelPreferences)
	maxTokens := p.MaxTokens
	if c := s.cfg.MaxTokens; c > 0 && (maxTokens <= 0 || maxTokens > c) {
		maxTokens = c
	}
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	var (
		body any
		err  error
	)
	if s.cfg.Provider == Anthropic {
		body, err = anthropicRequest(p, model, maxTokens)
	} else {
		body, err = chatRequest(p, model, maxTokens, s.cfg.Provider)
	}
	if err != nil {
		return nil, err
	}
	raw, err := s.post(ctx, model, body)
	if err != nil {
		return nil, err
	}
	if s.cfg.Provider == Anthropic {
		return anthropicResult(raw)
	}
	return chatResult(raw, s.cfg.Provider)
}

// CreateMessageFor is CreateMessage with the asking server's name, the
// handler fleet.WithSampling takes. The name does not change the answer.
func (s *Sampler) CreateMessageFor(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return s.CreateMessage(ctx, p)
}

// ChooseModel maps a server's modelPreferences onto the configured
// models. Hints are read in order; the first hint that is a substring of
// some models' names (case folded) wins, and among those models the
// priorities decide. When no hint matches, the priorities pick among all
// of Models: the highest sum of costPriority×Cheapness +
// speedPriority×Speed + intelligencePriority×Intelligence, the earlier
// model on a tie. Without hints that match nor priorities, Model.
func (s *Sampler) ChooseModel(p *mcp.ModelPreferences) string {
	if p == nil || len(s.cfg.Models) == 0 {
		return s.cfg.Model
	}
	for _, h := range p.Hints {
		name := strings.ToLower(h.Name)
		if name == "" {
			continue
		}
		var match []Model
		for _, m := range s.cfg.Models {
			if strings.Contains(strings.ToLower(m.Name), name) {
				match = append(match, m)
			}
		}
		if len(match) > 0 {
			return best(match, p)
		}
	}
	if p.CostPriority == nil && p.SpeedPriority == nil && p.IntelligencePriority == nil {
		return s.cfg.Model
	}
	return best(s.cfg.Models, p)
}

// best is the model of ms with the highest score for p's priorities; the
// first on a tie.
func best(ms []Model, p *mcp.ModelPreferences) string {
	w := func(f *float64) float64 {
		if f == nil {
			return 0
		}
		return *f
	}
	cost, speed, intel := w(p.CostPriority), w(p.SpeedPriority), w(p.IntelligencePriority)
	top, topScore := ms[0].Name, -1.0
	for _, m := range ms {
		if sc := cost*m.Cheapness + speed*m.Speed + intel*m.Intelligence; sc > topScore {
			top, topScore = m.Name, sc
		}
	}
	return top
}

// post sends body to the endpoint and returns the answer's body, bounded.
func (s *Sampler) post(ctx context.Context, model string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("sampling through %s: encoding the request: %w", apiName(s.cfg.Provider), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint.String(), bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("sampling through %s: %w", apiName(s.cfg.Provider), err)
	}
	for k, v := range s.cfg.Header {
		req.Header[k] = append([]string(nil), v...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if s.cfg.Provider == Anthropic {
		if req.Header.Get("anthropic-version") == "" {
			req.Header.Set("anthropic-version", "2023-06-01")
		}
		if s.cfg.APIKey != "" {
			req.Header.Set("x-api-key", s.cfg.APIKey)
		}
	} else if s.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	where := origin.Redact(s.endpoint)
	if err != nil {
		s.log(ctx, model, 0, start, err)
		return nil, fmt.Errorf("sampling through %s at %s: %w", apiName(s.cfg.Provider), where, s.redact(err))
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxResponse+1))
	s.log(ctx, model, resp.StatusCode, start, rerr)
	if resp.StatusCode/100 != 2 {
		return nil, s.apiError(resp, data)
	}
	if rerr != nil {
		return nil, &SamplingResponseError{Provider: s.cfg.Provider, Why: "the answer broke off: " + s.redact(rerr).Error()}
	}
	if int64(len(data)) > s.cfg.MaxResponse {
		return nil, &SamplingResponseError{Provider: s.cfg.Provider, Why: fmt.Sprintf("the answer is over %d bytes", s.cfg.MaxResponse)}
	}
	return data, nil
}

func (s *Sampler) log(ctx context.Context, model string, status int, start time.Time, err error) {
	if s.cfg.Logger == nil {
		return
	}
	attrs := []slog.Attr{slog.String("provider", string(s.cfg.Provider)), slog.String("endpoint", origin.Redact(s.endpoint)),
		slog.String("model", model), slog.Int("status", status), slog.Duration("took", time.Since(start))}
	if err != nil {
		attrs = append(attrs, slog.String("error", s.redact(err).Error()))
	}
	s.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "sampling request", attrs...)
}

// redact removes the key from an error's text, should a transport or an
// endpoint ever echo it.
func (s *Sampler) redact(err error) error {
	if s.cfg.APIKey == "" || !strings.Contains(err.Error(), s.cfg.APIKey) {
		return err
	}
	return redactedError{msg: strings.ReplaceAll(err.Error(), s.cfg.APIKey, "[redacted]"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// maxErrorText bounds the endpoint's error message kept in a SamplingAPIError.
const maxErrorText = 1024

// apiError reads an error answer: OpenAI's {"error":{"message","type",
// "code"}} or Anthropic's {"type":"error","error":{"type","message"}}.
func (s *Sampler) apiError(resp *http.Response, body []byte) error {
	e := &SamplingAPIError{Provider: s.cfg.Provider, Status: resp.StatusCode}
	var w struct {
		Error json.RawMessage `json:"error"`
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &w) == nil && json.Unmarshal(w.Error, &inner) == nil {
		e.Message, e.Type = inner.Message, inner.Type
		if e.Type == "" && len(inner.Code) > 0 && inner.Code[0] == '"' {
			json.Unmarshal(inner.Code, &e.Type)
		}
	} else if json.Unmarshal(body, &w) == nil && len(w.Error) > 0 && w.Error[0] == '"' {
		json.Unmarshal(w.Error, &e.Message) // some compatible servers: {"error":"..."}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
	}
	if len(e.Message) > maxErrorText {
		e.Message = e.Message[:maxErrorText] + "…"
	}
	if s.cfg.APIKey != "" {
		e.Message = strings.ReplaceAll(e.Message, s.cfg.APIKey, "[redacted]")
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = max(time.Until(t), 0)
		}
	}
	return e
}

// toolChoiceMode reads the sampling request's toolChoice: "auto" (also
// when absent), "required" or "none".
func toolChoiceMode(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var c struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", &SamplingContentError{Why: "toolChoice is not an object with a mode"}
	}
	switch c.Mode {
	case "", "auto", "required", "none":
		return c.Mode, nil
	}
	return "", &SamplingContentError{Why: fmt.Sprintf("toolChoice mode %q is none of auto, required, none", c.Mode)}
}

// inputSchema is a tool's input schema, {"type":"object"} when it has none.
func inputSchema(t mcp.Tool) json.RawMessage {
	if len(bytes.TrimSpace(t.InputSchema)) == 0 || string(t.InputSchema) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.InputSchema
}

// toolInput parses a model's tool arguments into a JSON object.
func toolInput(p Provider, name string, args []byte) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, &SamplingResponseError{Provider: p, Why: fmt.Sprintf("the model called tool %q with arguments that are not a JSON object", name)}
	}
	return json.RawMessage(args), nil
}
