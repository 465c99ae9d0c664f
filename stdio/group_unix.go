//go:build unix && !linux

package stdio

import "syscall"

// groupAlive reports whether a process of group pgid still exists.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}

// setParentDeathSignal does nothing: only Linux has a parent-death signal.
func setParentDeathSignal(*syscall.SysProcAttr) {}
