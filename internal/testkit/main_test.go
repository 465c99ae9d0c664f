package testkit

import (
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

// Children sees a process this one started while it runs, and not once
// it has been waited for.
func TestChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Children reads /proc")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !slices.Contains(Children(), pid) {
		t.Errorf("Children() = %v, lacks the running child %d", Children(), pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if slices.Contains(Children(), pid) {
		t.Errorf("Children() = %v, still has %d after Wait", Children(), pid)
	}
}
