//go:build !unix

package main

import (
	"context"
	"errors"
	"io"
	"syscall"
)

// Sessions need Unix sockets, flock and process sessions.

var errNoSessions = errors.New("sessions need a Unix system (Linux, macOS)")

func detachedAttr() *syscall.SysProcAttr                        { return nil }
func ensurePrivateDir(string) (string, error)                   { return "", errNoSessions }
func lockSession(context.Context, sessionFiles) (func(), error) { return nil, errNoSessions }
func tryLock(sessionFiles) (func(), bool)                       { return nil, false }
func processAlive(int) bool                                     { return false }
func terminateProcess(int)                                      {}
func killProcess(int)                                           {}
func isZombie(int) bool                                         { return false }
func isGateway(int, string) bool                                { return false }
func killSessionProcesses(int, string)                          {}

func readyPipe() io.WriteCloser { return nil }
func privateUmask()             {}
