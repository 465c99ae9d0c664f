package main

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
)

// splitTarget separates a command's own positional arguments from the
// target at the end of the line: either one http(s) URL as the last
// argument, or everything after `--` as a command to start.
func splitTarget(cmd *cobra.Command, args []string, own int) ([]string, client.Target, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash != own {
			return nil, client.Target{}, usageError(cmd, "expected %d argument(s) before `--`, got %d", own, dash)
		}
		if len(args) == dash {
			return nil, client.Target{}, usageError(cmd, "no command after `--`")
		}
		return args[:dash], client.Command(args[dash], args[dash+1:]...), nil
	}
	if len(args) != own+1 {
		return nil, client.Target{}, usageError(cmd, "expected %d argument(s) and a target (a URL, or `-- command args...`) last", own)
	}
	u, err := url.Parse(args[own])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, client.Target{}, usageError(cmd, "target %q is not an http(s) URL; for a command, put it after `--`", args[own])
	}
	return args[:own], client.URL(args[own]), nil
}

func usageError(cmd *cobra.Command, format string, a ...any) error {
	return &exitError{exitUsage, errors.New(cmd.CommandPath() + ": " + fmt.Sprintf(format, a...))}
}
