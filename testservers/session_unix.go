//go:build unix

package testservers

import "syscall"

// newSession starts a process in a session (and process group) of its own.
func newSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
