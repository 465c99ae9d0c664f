package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// Dial a server by URL and call one of its tools.
func ExampleDial() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{}) // stands in for any MCP server
	defer srv.Close()

	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	res, err := conn.CallTool(ctx, "add", map[string]int{"a": 2, "b": 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text, string(res.StructuredContent))
	fmt.Println(conn.Info().Transport, conn.Info().ProtocolVersion)
	// Output:
	// 2+3=5 {"sum":5}
	// streamable-http 2025-11-25
}

// Start a local server as a child process and talk to it over stdio.
func ExampleCommand() {
	path, args, env := testservers.StdioCommand() // this program, started again as a stdio test server
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.Command(path, args...).WithEnv(env...))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	res, err := conn.CallTool(ctx, "echo", map[string]string{"text": "hello over stdio"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text, conn.Info().Transport)
	// Output: hello over stdio stdio
}

// Follow a long call's progress; the request timeout restarts with each update.
func ExampleWithProgress() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	res, err := conn.CallTool(ctx, "slow", map[string]int{"steps": 3, "delayMs": 10},
		client.WithProgress(func(p mcp.ProgressParams) { fmt.Printf("%v/%v\n", p.Progress, p.Total) }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// 1/3
	// 2/3
	// 3/3
	// done 3 steps
}

// List every tool, following pagination cursors as the loop goes.
func ExampleConn_Tools() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{PageSize: 2}})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	for tool, err := range conn.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		if tool.Name == "echo" || tool.Name == "add" {
			fmt.Println(tool.Name, "-", tool.Description)
		}
	}
	// Output:
	// echo - Returns the text it is given.
	// add - Adds two numbers; the sum is also in structuredContent.
}

// A tool the server runs as a task: CallTool waits for it and returns its
// result; OnTask gives the host the task's id (to await it again later,
// with AwaitTask, should the wait end first) and each status seen.
func ExampleOnTask() {
	srv := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{
		Tasks: testservers.TaskOptions{Enabled: true}, // its task tools run as tasks of the 2026-07-28 extension
	}})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var id string
	res, err := conn.CallTool(ctx, "task_sleep", map[string]any{"ms": 50, "text": "done"},
		client.OnTask(func(t mcp.Task) {
			if id == "" {
				id = t.TaskID // persist it, to AwaitTask after a restart
			}
		}))
	if err != nil {
		log.Fatal(err) // a *client.TaskError names the task when the wait ended first
	}
	fmt.Println(res.Content[0].Text, id != "")

	again, err := conn.AwaitTask(ctx, id) // a task outlives its call
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.Content[0].Text)
	// Output:
	// done true
	// done
}
