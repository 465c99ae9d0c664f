package stdio

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnviron(t *testing.T) {
	t.Setenv("HOME", "/h")
	t.Setenv("PATH", "/bin")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "nope")
	lookup := func(env []string, key string) (string, bool) {
		v, ok := "", false
		for _, kv := range env { // the last one wins, as in os/exec
			if k, val, _ := strings.Cut(kv, "="); k == key {
				v, ok = val, true
			}
		}
		return v, ok
	}

	c := Command{Env: []string{"PATH=/opt/bin", "TOKEN=t"}}
	env := c.environ()
	if _, ok := lookup(env, "AWS_SECRET_ACCESS_KEY"); ok {
		t.Error("allowlist passes AWS_SECRET_ACCESS_KEY")
	}
	for key, want := range map[string]string{"HOME": "/h", "PATH": "/opt/bin", "TOKEN": "t"} {
		if v, _ := lookup(env, key); v != want {
			t.Errorf("%s=%q, want %q", key, v, want)
		}
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(baseEnvKeys[:], k) && k != "TOKEN" {
			t.Errorf("unexpected variable %s", k)
		}
	}

	c.InheritEnv = true
	env = c.environ()
	if v, _ := lookup(env, "AWS_SECRET_ACCESS_KEY"); v != "nope" {
		t.Error("InheritEnv drops variables")
	}
	if v, _ := lookup(env, "PATH"); v != "/opt/bin" {
		t.Errorf("InheritEnv: PATH=%q, want the override", v)
	}
}

func TestDefaults(t *testing.T) {
	var c Command
	if c.maxLineSize() != DefaultMaxLineSize {
		t.Errorf("max line %d", c.maxLineSize())
	}
	for _, tt := range []struct{ in, want time.Duration }{
		{0, 2 * time.Second}, {-1, 0}, {time.Millisecond, time.Millisecond},
	} {
		if got := waitOrDefault(tt.in, 2*time.Second); got != tt.want {
			t.Errorf("waitOrDefault(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestExitErrorMessage(t *testing.T) {
	tests := []struct {
		err  ExitError
		want string
	}{
		{ExitError{ExitCode: 3}, "server process exited with status 3"},
		{ExitError{ExitCode: -1, Signal: "SIGKILL"}, "server process killed by signal SIGKILL"},
		{ExitError{ExitCode: 1, Stderr: "boom\n\n"}, "server process exited with status 1; stderr tail:\nboom"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if got := (&LineTooLongError{Limit: 10}).Error(); !strings.Contains(got, "longer than 10 bytes") {
		t.Errorf("LineTooLongError: %q", got)
	}
}
