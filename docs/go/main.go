// An adapter in Go: run boo-normalize as a child process, decode its envelope line by line, pair
// tool calls with their results, and report the run's totals and exit status.
//
//	go run . FILE.ndjson            # or: claude -p … --output-format stream-json --verbose | go run .
//
// The binary is $BOO_NORMALIZE_BINARY, else `boo-normalize` on PATH. For a live run, start
// `boo-normalize spawn --prompt …` the same way: killing it (even with SIGKILL, as
// exec.CommandContext does) stops claude and everything it started.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	bin := os.Getenv("BOO_NORMALIZE_BINARY")
	if bin == "" {
		bin = "boo-normalize"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := exec.CommandContext(ctx, bin, append([]string{"normalize"}, files...)...)
	cmd.Stdin = stdin
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "example:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "example:", err)
		return 127
	}

	calls := map[string]*ToolCall{}
	var end *RunEnd
	// Lines can be large (a tool result of megabytes): read whole lines, not bufio.Scanner tokens.
	reader := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) > 0 {
			event, derr := Decode(line)
			if derr != nil {
				fmt.Fprintln(stderr, "example:", derr)
				continue
			}
			switch e := event.(type) {
			case *ToolCall:
				calls[str(e.ToolUseID)] = e
			case *ToolResult:
				if call, ok := calls[str(e.ToolUseID)]; ok {
					status := "ok"
					if e.IsError {
						status = "error"
					}
					fmt.Fprintf(stdout, "tool %s %s %s\n", str(call.Name), str(e.ToolUseID), status)
					delete(calls, str(e.ToolUseID))
				}
			case *Diagnostic:
				fmt.Fprintf(stdout, "diagnostic line %d: %s\n", deref(e.Line), e.Kind)
			case *RunEnd:
				end = e
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(stderr, "example: reading the envelope:", err)
			break
		}
	}
	for id, call := range calls {
		fmt.Fprintf(stdout, "tool %s %s no-result\n", str(call.Name), id)
	}
	if end != nil {
		fmt.Fprintf(stdout, "run.end cause=%s turns=%d tool_calls=%d output_tokens=%d lines=%d\n",
			end.Cause, end.Turns, end.ToolCalls, end.Usage.OutputTokens, end.Stats.Lines)
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			// The documented statuses: 1 --strict findings, 2 usage/input, 3 no result line, …
			fmt.Fprintf(stderr, "example: boo-normalize exited with status %d\n", exit.ExitCode())
			return exit.ExitCode()
		}
		fmt.Fprintln(stderr, "example:", err)
		return 1
	}
	return 0
}

func str(p *string) string {
	if p == nil {
		return "(null)"
	}
	return *p
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
