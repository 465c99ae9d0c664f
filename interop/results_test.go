package interop_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// With -results, TestInterop writes what it found: RESULTS.md in full,
// and the same table between the interop markers of ../docs/interop.md.

const (
	resultsFile = "RESULTS.md"
	guideFile   = "../docs/interop.md"
	beginMarker = "<!-- interop:begin -->"
	endMarker   = "<!-- interop:end -->"
	// gatewayMarker starts RESULTS.md's gateway section, which
	// writeTables keeps.
	gatewayMarker = "<!-- gateway:begin -->"
)

// goModuleVersion is the version of module path that this module builds
// with, as the go command selects it (a test binary carries no dependency
// versions of its own).
func goModuleVersion(path string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", path).Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return "unknown"
}

// table renders the rows as Markdown.
func table(rows []*result) string {
	var b strings.Builder
	b.WriteString("| server | version | setup | expected: era / transport / revision | got | negotiation | ")
	b.WriteString(strings.Join(stepNames[stepList:], " | "))
	b.WriteString(" |\n|---|---|---|---|---|---|")
	b.WriteString(strings.Repeat("---|", nSteps-stepList))
	b.WriteString("\n")
	for _, r := range rows {
		got := r.got.String()
		switch {
		case r.steps[stepNegotiate] == "":
			got = "not run"
		case strings.HasPrefix(r.steps[stepNegotiate], "FAIL"):
			got = "**" + r.steps[stepNegotiate] + "**"
		default:
			got = "✓ " + got
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |", r.peer.server, r.version, r.peer.mode, r.peer.want, got, r.ladder)
		for _, s := range r.steps[stepList:] {
			switch {
			case s == "":
				s = "not run"
			case strings.HasPrefix(s, "FAIL"):
				s = "**" + s + "**"
			}
			fmt.Fprintf(&b, " %s |", s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// summary counts the rows that passed every step.
func summary(rows []*result) string {
	ok := 0
	for _, r := range rows {
		if !r.failed() {
			ok++
		}
	}
	return fmt.Sprintf("%d of %d servers pass every step.", ok, len(rows))
}

func writeTables(rows []*result) error {
	node := "node not found"
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		node = "Node " + strings.TrimSpace(string(out))
	}
	tbl := table(rows)
	var res strings.Builder
	fmt.Fprintf(&res, "# Interop results\n\n")
	fmt.Fprintf(&res, "Written by `interop/run.sh` (`go test -run TestInterop -args -results` in `interop/`) on %s, %s %s/%s, %s, TypeScript SDK %s under server-everything.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOOS, runtime.GOARCH, node, npmVersion("@modelcontextprotocol/sdk"))
	res.WriteString(summary(rows) + "\n\n")
	res.WriteString(tbl)
	res.WriteString(`
Each row starts its server fresh on 127.0.0.1 (port 0) and dials it with anymcp's defaults (one row pins
the initialize era with ` + "`client.WithEra(negotiate.InitializeOnly)`" + `). The steps, each asserted:

- **negotiate**: ` + "`client.Dial`" + `; ` + "`Info()`" + ` must name the expected era, transport and revision, and the report the era.
  *negotiation* lists the attempts of the report and the answer each got.
- **list**: ` + "`tools/list`" + ` (every page) holds the three tools the steps use.
- **call**: ` + "`tools/call`" + ` of echo answers the text sent.
- **progress**: a call with a progress token gets every notification, 1..n in order, before its answer.
- **cancel**: a slow call, cancelled after its first progress notification, returns ` + "`context.Canceled`" + ` and
  ` + "`jsonrpc.ErrOutcomeUnknown`" + ` at once; the client signalled it as the revision says (initialize-era servers and
  stdio: a ` + "`notifications/cancelled`" + ` naming the call is sent; a 2026-07-28 server over HTTP: the answer
  stream is closed); the server's handler saw it (the Go servers record it; server-everything's tool never
  looks, so it cannot tell); the next call on the same connection works.
- **close**: ` + "`Close`" + ` returns nil, no goroutine of the library is left, and no process of the server
  (stdio: anymcp stops it; the npm HTTP servers are stopped by the test, by process group). goleak checks the
  whole run.

The mcp-go servers' progress tool waits, after each notification, for the client to report it received it:
mcp-go v1.2.1's Streamable HTTP server drops a notification that races the tool's answer (its forwarder
goroutine loses the lock to the final drain), which would make the progress step fail for mcp-go's sake, not
anymcp's (see mcpgo_test.go). server-everything's tools are its own: ` + "`echo`" + `, and
` + "`trigger-long-running-operation`" + ` for both progress and cancellation; it listens on every interface unless
loaded with ` + "`loopback.mjs`" + `, which makes it bind 127.0.0.1.

The go-sdk stdio servers are this test binary started again; the two "first answer after" rows hold
their first read back longer than anymcp waits for the stdio probe (` + "`negotiate.DefaultProbeTimeout`" + `), as a
server started through npx or uvx may on a first run. go-sdk handles requests concurrently, so its answer
to ` + "`initialize`" + ` (a refusal, or 2025-11-25) may come before or after its late answer to the probe: the
*negotiation* column shows this run's order.
`)
	// The gateway section, recorded by hand from the Gateway tests, is
	// kept as it is.
	if old, err := os.ReadFile(resultsFile); err == nil {
		if i := bytes.Index(old, []byte(gatewayMarker)); i >= 0 {
			res.WriteString("\n")
			res.Write(old[i:])
		}
	}
	if err := os.WriteFile(resultsFile, []byte(res.String()), 0o644); err != nil {
		return err
	}

	guide, err := os.ReadFile(guideFile)
	if err != nil {
		return err
	}
	i := bytes.Index(guide, []byte(beginMarker))
	j := bytes.Index(guide, []byte(endMarker))
	if i < 0 || j < i {
		return errors.New(guideFile + ": no " + beginMarker + " … " + endMarker + " section")
	}
	var out bytes.Buffer
	out.Write(guide[:i+len(beginMarker)])
	out.WriteString("\n" + summary(rows) + "\n\n" + tbl)
	out.Write(guide[j:])
	return os.WriteFile(guideFile, out.Bytes(), 0o644)
}
