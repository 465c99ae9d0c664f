//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procStat returns the fields of /proc/PID/stat after the command name:
// state, ppid, pgrp, session, ...
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	var out []string
	for _, f := range bytes.Fields(b[i+1:]) {
		out = append(out, string(f))
	}
	return out
}

func isZombie(pid int) bool {
	st := procStat(pid)
	return len(st) > 0 && (st[0] == "Z" || st[0] == "X")
}

// isGateway reports whether pid is a session gateway (its line, name
// included, came on stdin): the pid of a dead one may have gone to
// another program since.
func isGateway(pid int, _ string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || isZombie(pid) {
		return false
	}
	return bytes.Contains(b, []byte("\x00"+gatewayCommand))
}

// killSessionProcesses kills every process left in the Unix session of
// session name's gateway (sid: its pid): the servers it started, and
// theirs, unless they left for a session of their own. Linux gives the
// number to no new process while the session has members; a live
// process of that pid that is no gateway means the number was free, and
// so was reused: its session is another's, and left alone.
func killSessionProcesses(sid int, name string) {
	if processAlive(sid) && !isGateway(sid, name) {
		return
	}
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := os.Getpid()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		if st := procStat(pid); len(st) > 3 && st[3] == strconv.Itoa(sid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
