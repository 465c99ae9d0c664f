package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"syscall"
	"testing"

	"github.com/anymcp/anymcp/gateway"
)

// The TypeScript SDK's client through the gateway, over Streamable HTTP
// (it asks for 2025-11-25) and over /sse (2024-11-05), run by Node with
// gateway_client.mjs. Both answer elicitations.
func TestGatewayTypeScriptSDK(t *testing.T) {
	node := nodePath(t)
	for _, tc := range []struct{ transport, path string }{{"streamable", "/mcp"}, {"sse", "/sse"}} {
		t.Run(tc.transport, func(t *testing.T) {
			f := startGatewayFleet(t, gateway.Config{})
			echoText := map[string]string{}
			for _, s := range gwServers {
				echoText[s] = gwEchoText(s)
			}
			steps, err := json.Marshal(map[string]any{
				"echo": gwServers, "echoText": echoText, "prompts": gwPromptServers,
				"resources": gwResources(), "elicit": gwElicitServers,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
			defer cancel()
			mark := newMark(t)
			cmd := exec.CommandContext(ctx, node, "gateway_client.mjs", f.url+tc.path, tc.transport, string(steps))
			cmd.Env = append(cmd.Environ(), markVar+"="+mark)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node gateway_client.mjs: %v; stderr: %s", err, stderr.String())
			}
			var got struct {
				ProtocolVersion string            `json:"protocolVersion"`
				ServerName      string            `json:"serverName"`
				Tools           []string          `json:"tools"`
				Echo            map[string]string `json:"echo"`
				Prompts         map[string]string `json:"prompts"`
				Resources       map[string]string `json:"resources"`
				Elicit          map[string]string `json:"elicit"`
				Asked           []string          `json:"asked"`
				Errors          []string          `json:"errors"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("the client's report %q: %v; stderr: %s", stdout.String(), err, stderr.String())
			}
			for _, e := range got.Errors {
				t.Errorf("TypeScript SDK: %s", e)
			}
			if got.ServerName != gateway.ServerName {
				t.Errorf("serverInfo.name %q, want %s", got.ServerName, gateway.ServerName)
			}
			if tc.transport == "streamable" && got.ProtocolVersion != "2025-11-25" {
				t.Errorf("negotiated %q, want 2025-11-25", got.ProtocolVersion)
			}
			checkGatewayReport(t, &gwReport{tools: got.Tools, echo: got.Echo, prompts: got.Prompts,
				resources: got.Resources, elicit: got.Elicit, asked: got.Asked}, true)
			f.checkUpstreamsHit(t, 1)
			if err := waitNoProcesses(ctx, mark); err != nil {
				t.Errorf("node: %v", err)
			}
		})
	}
}
