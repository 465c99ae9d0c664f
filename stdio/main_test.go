//go:build linux

package stdio_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/jsonrpc"
)

// The test binary is also the fake MCP server: started with
// STDIO_TEST_MODE set, it runs that mode on its stdin and stdout.
func TestMain(m *testing.M) {
	if mode := os.Getenv("STDIO_TEST_MODE"); mode != "" {
		os.Exit(fakeServer(mode))
	}
	goleak.VerifyTestMain(m)
}

// Modes of the fake server. Unless a mode says otherwise, the server
// answers every request by echoing its params as the result, answers the
// method "pid" with {"pid":..., "grandchild":...}, answers "initialize"
// with {"pid":..., "seen":...} (seen: how many messages came before it),
// and exits 0 at stdin EOF. With STDIO_TEST_STARTS set to a file name, every
// server appends its pid to that file as it starts.
const (
	modeEcho             = "echo"
	modeBanner           = "banner"             // non-JSON-RPC lines on stdout first
	modeCrash            = "crash"              // exit 3 after STDIO_TEST_N requests, with last words on stderr
	modeChatty           = "chatty"             // 10 MiB to stderr before reading stdin
	modeIgnoreStdinClose = "ignore-stdin-close" // keeps running after stdin EOF
	modeIgnoreSigterm    = "ignore-sigterm"     // and ignores SIGTERM too
	modeFailOnEOF        = "fail-on-eof"        // exits 7 at stdin EOF
	modeGrandchild       = "grandchild"         // starts a sleeping child in its group, sharing stdout and stderr
	modeOrphan           = "orphan"             // same, and exits 0 right after answering "pid"
	modeEscaped          = "escaped"            // the child runs in a session of its own, holding stdout
	modeEnv              = "env"                // answers with its environment
	modeBig              = "big"                // answers with a 16 MiB result
	modeOversize         = "oversize"           // answers "huge" with a STDIO_TEST_N byte line
	modeBatch            = "batch"              // answers with a batch: [response, notification]
	modeStdoutClose      = "stdout-close"       // closes stdout after the first answer, exits 0 at stdin EOF
	modeFloodExit        = "flood-exit"         // writes 200 notifications, then exits 0
	modeNoRead           = "noread"             // never reads stdin
	modeSink             = "sink"               // reads stdin and answers nothing
	modeSleep            = "sleep"              // the grandchild: sleeps
	modeCrashAtStart     = "crash-at-start"     // exit 3 at once, with its pid on stderr
	modeShortLived       = "short-lived"        // exit 3 after STDIO_TEST_N ms, or 0 at stdin EOF
	modeParent           = "parent"             // starts an ignore-stdin-close server (KillWithParent if STDIO_TEST_N is 1), prints its pid, sleeps
)

const (
	chattyBytes = 10 << 20
	chattyLast  = "chatty: done\n"
	bigResult   = 16 << 20
	floodCount  = 200
)

func fakeServer(mode string) int {
	if name := os.Getenv("STDIO_TEST_STARTS"); name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "recording the start:", err)
			return 1
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	grandchild := 0
	switch mode {
	case modeCrashAtStart:
		fmt.Fprintf(os.Stderr, "fatal: crashed at start, pid %d\n", os.Getpid())
		return 3
	case modeShortLived:
		ms, _ := strconv.Atoi(os.Getenv("STDIO_TEST_N"))
		go func() {
			io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}()
		live(time.Duration(ms) * time.Millisecond)
		return 3
	case modeSleep, modeNoRead:
		lingerForever()
		return 0
	case modeParent:
		return parentOfServer(os.Getenv("STDIO_TEST_N") == "1")
	case modeIgnoreSigterm:
		signal.Ignore(syscall.SIGTERM)
	case modeBanner:
		os.Stdout.WriteString("Example MCP server v1.2 listening on stdio\n\n   \r\nnot json {\n[1,2]\n{\"jsonrpc\":\"1.0\",\"method\":\"x\"}\n")
	case modeChatty:
		line := []byte(strings.Repeat("chatty: log line with some words in it ", 3) + "\n")
		w := bufio.NewWriterSize(os.Stderr, 64<<10)
		for n := 0; n+len(line) <= chattyBytes-len(chattyLast); n += len(line) {
			w.Write(line)
		}
		w.Flush()
		os.Stderr.WriteString(chattyLast)
	case modeGrandchild, modeOrphan, modeEscaped:
		self, _ := os.Executable()
		c := exec.Command(self)
		c.Env = append(os.Environ(), "STDIO_TEST_MODE="+modeSleep)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if mode == modeEscaped {
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "starting grandchild:", err)
			return 1
		}
		grandchild = c.Process.Pid
	case modeSink:
		io.Copy(io.Discard, os.Stdin)
		return 0
	case modeFloodExit:
		for i := range floodCount {
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`+"\n", i)
		}
		return 0
	}
	limit, _ := strconv.Atoi(os.Getenv("STDIO_TEST_N"))

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	requests, seen := 0, 0
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			m, derr := jsonrpc.DecodeMessage(line)
			if derr != nil {
				fmt.Fprintln(os.Stderr, "fake server: bad line:", derr)
			} else if m.IsRequest() {
				requests++
				reply(out, mode, m, grandchild, seen)
				out.Flush()
				switch {
				case mode == modeCrash && requests >= limit:
					os.Stderr.WriteString("fatal: the last words of the server\n")
					os.Exit(3)
				case mode == modeOrphan && m.Method == "pid":
					return 0
				case mode == modeStdoutClose:
					os.Stdout.Close()
				}
			}
			if derr == nil {
				seen++
			}
		}
		if err != nil {
			break
		}
	}
	switch mode {
	case modeIgnoreStdinClose, modeIgnoreSigterm:
		lingerForever()
	case modeFailOnEOF:
		return 7
	}
	return 0
}

func reply(out *bufio.Writer, mode string, m *jsonrpc.Message, grandchild, seen int) {
	resp := &jsonrpc.Message{ID: m.ID, Result: m.Params}
	switch {
	case m.Method == "pid":
		resp.Result = fmt.Appendf(nil, `{"pid":%d,"grandchild":%d}`, os.Getpid(), grandchild)
	case m.Method == "initialize":
		resp.Result = fmt.Appendf(nil, `{"pid":%d,"seen":%d}`, os.Getpid(), seen)
	case mode == modeEnv:
		resp.Result, _ = json.Marshal(map[string][]string{"env": os.Environ()})
	case mode == modeBig:
		resp.Result = jsonString(bigResult)
	case mode == modeOversize && m.Method == "huge":
		n, _ := strconv.Atoi(os.Getenv("STDIO_TEST_N"))
		resp.Result = jsonString(n)
	}
	b, err := jsonrpc.Append(nil, resp)
	if err != nil {
		panic(err)
	}
	if m.Method == "noted" { // a notification first, on a line of its own
		fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"before":%s}}`+"\n", m.ID.Raw())
	}
	if mode == modeBatch {
		out.WriteByte('[')
		out.Write(b)
		out.WriteString(`,{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}]`)
	} else {
		out.Write(b)
	}
	out.WriteByte('\n')
}

// jsonString returns a JSON string of n bytes, quotes included.
func jsonString(n int) []byte {
	b := bytes.Repeat([]byte{'x'}, n)
	b[0], b[n-1] = '"', '"'
	return b
}

// lingerForever keeps a server process alive until the test ends it, for
// two minutes at most in case a test leaks it.
func lingerForever() { live(2 * time.Minute) }

// live keeps the server process alive for d. Time is the event: a process
// that lives so long (a short life, or one that ignores stdin's end or
// SIGTERM) is what the test is about.
func live(d time.Duration) {
	time.Sleep(d)
}
