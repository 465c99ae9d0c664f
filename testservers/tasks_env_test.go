package testservers

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// TestTaskStdioEnv: the task options go through the environment of a
// stdio child (StdioEnv, OptionsFromEnv) unchanged.
func TestTaskStdioEnv(t *testing.T) {
	want := TaskOptions{Enabled: true, PollInterval: 50 * time.Millisecond, TTL: -1, ForgetAfterPolls: 3, MaxTasks: 2,
		StatusNotifications: true, InputWithoutResult: true}
	for _, kv := range StdioEnv(Options{Tasks: want}) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := OptionsFromEnv()
	if err != nil || got.Tasks != want {
		t.Errorf("OptionsFromEnv: %+v %v", got.Tasks, err)
	}
	if env := StdioEnv(Options{}); len(env) != 1 {
		t.Errorf("env without tasks: %q", env)
	}
	t.Setenv(EnvTaskMax, "many")
	if _, err := OptionsFromEnv(); err == nil {
		t.Error("a bad MaxTasks accepted")
	}
}

// TestTaskStdioSubprocess runs this test binary as a stdio server with
// tasks, as a client's tests do, and runs a task in it.
func TestTaskStdioSubprocess(t *testing.T) {
	path, args, env := StdioCommand()
	cmd := exec.Command(path, args...)
	cmd.Env = append(append(os.Environ(), env...), StdioEnv(tasksOn())[1:]...)
	cmd.WaitDelay = testTimeout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	out := bufio.NewReader(stdout)
	roundTrip := func(id int, method, params string) *jsonrpc.Message {
		t.Helper()
		if _, err := io.WriteString(stdin, reqJSON(id, method, params)+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		return mustDecode(t, string(line))
	}
	if m := roundTrip(0, "initialize", initParams); !strings.Contains(string(m.Result), `"tasks":{`) {
		t.Fatalf("initialize %s %v", m.Result, m.Error)
	}
	m := roundTrip(1, "tools/call", callParamsJSON(TaskSleepTool, map[string]any{"ms": 1, "text": "from the child"}, anyTTL))
	id := result[struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}](t, m).Task.TaskID
	m = roundTrip(2, "tasks/result", taskIDParams(id))
	if text, _ := taskResult(t, m, id); text != "from the child" {
		t.Errorf("tasks/result %q", text)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the child: %v", err)
	}
}
