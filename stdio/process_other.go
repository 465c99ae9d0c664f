//go:build !unix

package stdio

import (
	"os"
	"syscall"
)

// Without process groups and signals, the transport can only close stdin
// and then kill the direct child.

func procAttr(*Command) *syscall.SysProcAttr { return nil }

func terminateGroup(p *os.Process) {}

func killGroup(p *os.Process) { _ = p.Kill() }

func groupAlive(pgid int) bool { return false }

func (t *Transport) tryWrite(p []byte) (int, error) { return 0, nil }

func (t *Transport) newRawWrite() func(fd uintptr) bool { return nil }

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
