package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/mcp"
)

// tasks: the tasks a server runs tool calls as. tools call waits for its
// own; these commands reach a task by its id, from a run that gave up
// waiting, or another program.
func (c *cli) tasksCommand() *cobra.Command {
	tasks := &cobra.Command{
		Use:   "tasks",
		Short: "Follow, wait for and cancel the tasks the server runs tool calls as",
		Long: `A server may run a tool call as a task: tools call waits for it and prints its
result, and says the task's id on stderr. When the wait ends first (Ctrl-C,
--timeout), the task may still run: these commands reach it by its id.`,
	}
	tasks.AddCommand(&cobra.Command{
		Use:   "get ID TARGET",
		Short: "Show a task's status",
		Example: `  mcpcall tasks get 786512e2-9e0d-44bd-8f29-789f320fe840 http://127.0.0.1:8080/mcp
  mcpcall tasks get --json ID myserver | jq -r .status`,
		ValidArgsFunction: c.completeTarget(1),
		Args:              c.targetArgs(1, 1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			t, err := s.conn.GetTask(ctx, own[0])
			if err != nil {
				return err
			}
			return c.printTask(s, t)
		}),
	})
	tasks.AddCommand(&cobra.Command{
		Use:               "result ID TARGET",
		Short:             "Wait for a task and print its tool's result, as tools call does",
		Example:           `  mcpcall tasks result 786512e2-9e0d-44bd-8f29-789f320fe840 http://127.0.0.1:8080/mcp`,
		ValidArgsFunction: c.completeTarget(1),
		Args:              c.targetArgs(1, 1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			res, err := s.conn.AwaitTask(ctx, own[0], s.callOptions()...)
			s.progress.finish()
			if err != nil {
				return err
			}
			raw, err := json.Marshal(res)
			if err != nil {
				return err
			}
			return c.printToolResult(s, "of task "+own[0], raw)
		}),
	})
	tasks.AddCommand(&cobra.Command{
		Use:               "cancel ID TARGET",
		Short:             "Ask the server to cancel a task (it may finish all the same)",
		Example:           `  mcpcall tasks cancel 786512e2-9e0d-44bd-8f29-789f320fe840 myserver`,
		ValidArgsFunction: c.completeTarget(1),
		Args:              c.targetArgs(1, 1),
		RunE: c.connected(func(ctx context.Context, s *session, own []string) error {
			return s.conn.CancelTask(ctx, own[0])
		}),
	})
	tasks.AddCommand(&cobra.Command{
		Use:               "list TARGET",
		Short:             "List the server's tasks (revision 2025-11-25; the 2026-07-28 extension has no listing)",
		Example:           `  mcpcall tasks list --json myserver | jq -r '.tasks[] | select(.status == "working") | .taskId'`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.targetArgs(0, 0),
		RunE: c.connected(func(ctx context.Context, s *session, _ []string) error {
			var all []mcp.Task
			for t, err := range s.conn.Tasks(ctx) {
				if err != nil {
					return err
				}
				all = append(all, t)
			}
			if c.f.json {
				items := make([]json.RawMessage, len(all))
				for i := range all {
					items[i], _ = json.Marshal(&all[i])
				}
				return s.writeList("tasks", items)
			}
			for _, t := range all {
				fmt.Fprintln(c.stdout, taskLine(&t))
			}
			return nil
		}),
	})
	c.onTarget(tasks.Commands()...)
	return tasks
}

// printTask prints a task: its JSON with --json, else one line.
func (c *cli) printTask(s *session, t *mcp.Task) error {
	if c.f.json {
		raw, err := json.Marshal(t)
		if err != nil {
			return err
		}
		return s.writeResult(raw)
	}
	fmt.Fprintln(c.stdout, taskLine(t))
	return nil
}

// taskLine is a task in one line: its id, status and status message.
func taskLine(t *mcp.Task) string {
	line := shown(t.TaskID) + "\t" + shown(string(t.Status))
	if t.StatusMessage != "" {
		line += "\t" + shown(t.StatusMessage)
	}
	return line
}

// shown is text of the server's about a task (its id, status, status
// message) as mcpcall writes it for a person: as it is when it is
// printable, else quoted as a Go string, so that none of its control
// characters (terminal escapes) reaches the terminal.
func shown(s string) string {
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// printable reports whether s is UTF-8 made only of printable characters
// and spaces (strconv.IsPrint).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// taskWord is a task's id in a command line mcpcall suggests: one word
// of a POSIX shell whatever the server put in it. As it is, or in single
// quotes (shellQuote); when it is not printable, in dollar single quotes
// ($'...': POSIX.1-2024, bash, zsh, ksh) with each byte of what is not
// printable written \xHH.
func taskWord(id string) string {
	if printable(id) {
		return shellQuote(id)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(id); {
		r, n := utf8.DecodeRuneInString(id[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && n == 1, !strconv.IsPrint(r):
			for j := i; j < i+n; j++ {
				fmt.Fprintf(&b, "\\x%02x", id[j])
			}
		default:
			b.WriteString(id[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}
