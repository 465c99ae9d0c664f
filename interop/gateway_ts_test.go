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
			got := runTSClient(t, f.url+tc.path, tc.transport, steps)
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
		})
	}
}

// tsReport is what gateway_client.mjs prints.
type tsReport struct {
	ProtocolVersion string            `json:"protocolVersion"`
	ServerName      string            `json:"serverName"`
	Tools           []string          `json:"tools"`
	Echo            map[string]string `json:"echo"`
	Prompts         map[string]string `json:"prompts"`
	Resources       map[string]string `json:"resources"`
	Elicit          map[string]string `json:"elicit"`
	Approve         map[string]struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
		Error   string `json:"error"`
	} `json:"approve"`
	Asked  []string `json:"asked"`
	Errors []string `json:"errors"`
}

// runTSClient runs gateway_client.mjs with steps against url over
// transport ("streamable" or "sse"), in its own process group, killed at
// the test's bound; it checks that no process of it is left.
func runTSClient(t *testing.T, url, transport string, steps []byte) *tsReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
	defer cancel()
	mark := newMark(t)
	cmd := exec.CommandContext(ctx, nodePath(t), "gateway_client.mjs", url, transport, string(steps))
	cmd.Env = append(cmd.Environ(), markVar+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node gateway_client.mjs: %v; stderr: %s", err, stderr.String())
	}
	if err := waitNoProcesses(ctx, mark); err != nil {
		t.Errorf("node: %v", err)
	}
	got := &tsReport{}
	if err := json.Unmarshal(stdout.Bytes(), got); err != nil {
		t.Fatalf("the client's report %q: %v; stderr: %s", stdout.String(), err, stderr.String())
	}
	return got
}

// Approvals asked of the TypeScript SDK's client by elicitation, over
// Streamable HTTP: the tool it approves runs, the one it refuses does not
// reach its upstream.
func TestGatewayTypeScriptApproval(t *testing.T) {
	cfg, decisions := gwApprovals()
	f := startGatewayFleet(t, cfg)
	steps, err := json.Marshal(map[string]any{
		"echo": []string{}, "prompts": []string{}, "resources": []string{}, "elicit": []string{},
		"approve": []string{"stdio__echo", "sse__echo"}, "approveYes": []string{"stdio__echo"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := runTSClient(t, f.url+"/mcp", "streamable", steps)
	for _, e := range got.Errors {
		t.Errorf("TypeScript SDK: %s", e)
	}
	if a := got.Approve["stdio__echo"]; a.IsError || a.Text != "stdio__echo" {
		t.Errorf("stdio__echo, approved: %+v", a)
	}
	if a := got.Approve["sse__echo"]; !a.IsError {
		t.Errorf("sse__echo, refused by the client, ran: %+v", a)
	}
	if len(got.Asked) != 2 {
		t.Errorf("the client was asked %q, want once per gated call", got.Asked)
	}
	if n := f.sse.Server().Stats().ToolCalls["echo"]; n != 0 {
		t.Errorf("the sse upstream ran a refused echo %d times", n)
	}
	checkDecisions(t, decisions(), map[string]bool{"stdio__echo": true, "sse__echo": false}, "client")
}
