//go:build linux

package stdio

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// groupAlive reports whether a process of group pgid is still running.
// Zombies do not count: where pid 1 does not reap orphans, a killed
// grandchild stays a zombie for good, and waiting for it would be waiting
// for nothing.
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return true
	}
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err != nil || g != pgid {
			continue
		}
		if s := f[0]; len(s) == 1 && (s[0] == 'Z' || s[0] == 'X') {
			continue
		}
		return true
	}
	return false
}

// setParentDeathSignal has the kernel kill the server when its parent
// dies. (The signal follows the thread that forked it; Go ends a thread
// only when a goroutine locked to it returns without unlocking.)
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
