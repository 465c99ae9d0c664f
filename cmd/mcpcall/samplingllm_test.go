package main

import (
	"strings"
	"testing"

	"github.com/anymcp/anymcp/internal/fakemodel"
)

// TestSamplingLLM: --sampling-llm answers the server's sampling request
// in each era through the model's API, with the endpoint, key and model
// from the environment; the key goes to the endpoint only and never to
// stderr, even with -v.
func TestSamplingLLM(t *testing.T) {
	const key = "sk-mcpcall-test-key-42"
	for _, srv := range eraServers {
		t.Run(srv.name, func(t *testing.T) {
			target := eraTarget(t, srv.name, srv.start)
			for _, api := range []string{"openai", "anthropic"} {
				fm := fakemodel.New(t, fakemodel.Turn{Text: "Paris"})
				r := newRunner(t)
				r.env["MCPCALL_SAMPLING_MODEL"] = "model-a"
				if api == "openai" {
					r.env["OPENAI_API_KEY"], r.env["OPENAI_BASE_URL"] = key, fm.OpenAIBase()
				} else {
					r.env["ANTHROPIC_API_KEY"], r.env["ANTHROPIC_BASE_URL"] = key, fm.AnthropicBase()
				}
				res := r.run(append([]string{"-v", "--sampling-llm", api, "tools", "call", "sample", "prompt=capital of France?"}, target...)...)
				if res.code != exitOK || res.stdout != "Paris\n" {
					t.Fatalf("%s: exit %d, stdout %q\nstderr %s", api, res.code, res.stdout, res.stderr)
				}
				reqs := fm.Requests()
				if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"capital of France?"`) || !strings.Contains(string(reqs[0].Body), `"model":"model-a"`) {
					t.Fatalf("%s: the model got %d requests: %v", api, len(reqs), reqs)
				}
				if h := reqs[0].Header; h.Get("Authorization") != "Bearer "+key && h.Get("x-api-key") != key {
					t.Errorf("%s: the key was not sent: %v", api, h)
				}
				if strings.Contains(res.stderr, key) || !strings.Contains(res.stderr, "sampling request") {
					t.Errorf("%s: stderr holds the key, or no debug line:\n%s", api, res.stderr)
				}
			}
		})
	}
}

// TestSamplingLLMUsage: what --sampling-llm refuses before connecting,
// with exit status 2.
func TestSamplingLLMUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--sampling-llm", "gemini"}, nil, "want openai, openai-compatible or anthropic"},
		{[]string{"--sampling-llm", "openai", "--sampling-cmd", "echo hi"}, nil, "not both"},
		{[]string{"--sampling-llm", "openai"}, map[string]string{"MCPCALL_SAMPLING_MODEL": ""}, "name the model"},
		{[]string{"--sampling-llm", "openai-compatible", "--sampling-model", "m"}, map[string]string{"OPENAI_BASE_URL": ""}, "BaseURL"},
		{[]string{"--sampling-model", "m"}, nil, "needs --sampling-llm"},
	} {
		r := newRunner(t)
		for k, v := range tc.env {
			r.env[k] = v
		}
		res := r.run(append(tc.args, "tools", "call", "sample", "prompt=x", "http://127.0.0.1:1/mcp")...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d and %q", tc.args, res.code, res.stderr, exitUsage, tc.want)
		}
	}
}
