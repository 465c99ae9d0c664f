package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runProcess runs this test binary as mcpcall (TestMain) with args, for
// the failures that only a process of its own survives: a stack overflow
// aborts the whole test binary. It gives the exit status and the output.
func runProcess(t *testing.T, args ...string) (int, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(os.Environ(), asMCPCall+"=1", "GORACE=atexit_sleep_ms=0")
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mcpcall %s: still running after 30 s", strings.Join(args, " "))
	}
	text := string(out)
	if len(text) > 600 { // a stack overflow's trace runs to megabytes
		text = text[:600] + "…"
	}
	return cmd.ProcessState.ExitCode(), text
}

// TestSchemaRefersToItself: a tool schema that refers to itself for the
// same value (allOf or anyOf with a $ref to the root or an ancestor), or
// whose alternatives share a subschema level after level, is checked
// within a budget and then taken as unknown: tools list prints the tool,
// tools call calls it, where mcpcall recursed until the Go runtime aborted
// it (exit 2, a stack overflow).
func TestSchemaRefersToItself(t *testing.T) {
	// 40 levels of allOf, each naming the next twice: 2^40 paths.
	var fan strings.Builder
	fan.WriteString(`{"type":"object","properties":{"x":{"type":"string"}},"allOf":[{"$ref":"#/$defs/d0"}],"$defs":{`)
	for i := range 40 {
		if i > 0 {
			fan.WriteString(",")
		}
		fan.WriteString(`"d` + strconv.Itoa(i) + `":{"allOf":[{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"},{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}]}`)
	}
	fan.WriteString(`,"d40":{"required":["x"]}}}`)
	cases := []struct{ name, schema string }{
		{"allOf root", `{"type":"object","properties":{"x":{"type":"string"}},"allOf":[{"$ref":"#"}]}`},
		{"anyOf ancestor", `{"type":"object","properties":{"x":{"anyOf":[{"$ref":"#/properties/x"}]}}}`},
		{"oneOf ancestor", `{"type":"object","properties":{"x":{"oneOf":[{"$ref":"#/properties/x"},{"$ref":"#/properties/x"}]}}}`},
		{"shared alternatives", fan.String()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, calls := rawServer(t, `[{"name":"t","inputSchema":`+tc.schema+`}]`, `{"content":[{"type":"text","text":"ran"}]}`)
			if code, out := runProcess(t, "tools", "list", url); code != 0 || !strings.HasPrefix(out, "t(x") {
				t.Errorf("tools list: exit %d, want 0 and the tool\n%s", code, out)
			}
			code, out := runProcess(t, "tools", "call", "t", "x=1", url)
			if code != 0 || out != "ran\n" || calls.Load() != 1 {
				t.Errorf("tools call: exit %d, the tool ran %d times, want exit 0 and once\n%s", code, calls.Load(), out)
			}
		})
	}
}
