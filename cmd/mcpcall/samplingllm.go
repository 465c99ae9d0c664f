package main

import (
	"strings"

	"github.com/anymcp/anymcp/llm"
)

// --sampling-llm: mcpcall answers sampling/createMessage through a model's
// API (llm.Sampler), with the endpoint and key from the environment
// variables the providers' SDKs read.

// samplingModelEnv names the model (or models, comma-separated) when no
// --sampling-model is given: no SDK has a variable for it.
const samplingModelEnv = "MCPCALL_SAMPLING_MODEL"

// samplingLLMFlags are --sampling-llm and --sampling-model, and the
// Sampler they make.
type samplingLLMFlags struct {
	api     string   // --sampling-llm openai|openai-compatible|anthropic
	models  []string // --sampling-model NAME (repeatable)
	sampler *llm.Sampler
}

// startSamplingLLM makes the Sampler of --sampling-llm, if given.
func (c *cli) startSamplingLLM() error {
	a := &c.answers.samplingLLM
	if a.sampler != nil || a.api == "" {
		if a.api == "" && len(a.models) > 0 {
			return usageErr("--sampling-model needs --sampling-llm")
		}
		return nil
	}
	if c.answers.samplingCmd != "" {
		return usageErr("give --sampling-llm or --sampling-cmd, not both")
	}
	cfg := llm.SamplingConfig{Logger: c.log}
	switch a.api {
	case "openai":
		cfg.Provider = llm.OpenAIChat
	case "openai-compatible":
		cfg.Provider = llm.OpenAICompatible
	case "anthropic":
		cfg.Provider = llm.Anthropic
	default:
		return usageErr("--sampling-llm %q: want openai, openai-compatible or anthropic", a.api)
	}
	if cfg.Provider == llm.Anthropic {
		cfg.APIKey, cfg.BaseURL = c.getenv("ANTHROPIC_API_KEY"), c.getenv("ANTHROPIC_BASE_URL")
	} else {
		cfg.APIKey, cfg.BaseURL = c.getenv("OPENAI_API_KEY"), c.getenv("OPENAI_BASE_URL")
	}
	names := a.models
	if len(names) == 0 {
		for n := range strings.SplitSeq(c.getenv(samplingModelEnv), ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return usageErr("--sampling-llm %s: name the model with --sampling-model or $%s", a.api, samplingModelEnv)
	}
	for _, n := range names {
		cfg.Models = append(cfg.Models, llm.Model{Name: n})
	}
	s, err := llm.NewSampler(cfg)
	if err != nil {
		return usageErr("--sampling-llm %s: %v", a.api, err)
	}
	a.sampler = s
	return nil
}
