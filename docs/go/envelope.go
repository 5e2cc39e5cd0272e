// Envelope v1 types for Go, decoded with encoding/json. Hand-kept: envelope_test.go checks every
// field against `boo-normalize schema` (name, JSON type, nullability; every required member).
// Members and event types this file does not know are ignored, as the envelope's versioning
// rule asks: unknown types decode to *Other with the whole line.
package main

import (
	"encoding/json"
	"fmt"
)

// Event holds the members every envelope event has.
type Event struct {
	V               int     `json:"v"`
	Seq             uint64  `json:"seq"`
	Type            string  `json:"type"`
	SessionID       *string `json:"session_id"`
	ParentToolUseID *string `json:"parent_tool_use_id"` // the Task/Agent call a subagent's event belongs to
	Line            *int64  `json:"line"`               // 1-based input line; null for synthesized events
	UUID            string  `json:"uuid,omitempty"`
	Ephemeral       bool    `json:"ephemeral,omitempty"`
}

// SessionInit is `session.init`: the CLI's system/init line.
type SessionInit struct {
	Event
	Model          json.RawMessage `json:"model"`
	Cwd            json.RawMessage `json:"cwd"`
	Tools          json.RawMessage `json:"tools"`
	MCPServers     json.RawMessage `json:"mcp_servers"`
	PermissionMode json.RawMessage `json:"permission_mode"`
	CLIVersion     *string         `json:"cli_version"`
	APIKeySource   json.RawMessage `json:"api_key_source"`
}

// Text is `text`: a whole assistant text block.
type Text struct {
	Event
	MessageID *string `json:"message_id"`
	Model     *string `json:"model"`
	Text      *string `json:"text"` // null when the CLI wrote a block without text
	Synthetic bool    `json:"synthetic,omitempty"`
}

// Thinking is `thinking`: a whole thinking block (null text when redacted).
type Thinking struct {
	Event
	MessageID *string `json:"message_id"`
	Thinking  *string `json:"thinking"`
	Redacted  bool    `json:"redacted"`
}

// ToolCall is `tool.call`: exactly one per tool use, input parsed.
type ToolCall struct {
	Event
	ToolUseID  *string         `json:"tool_use_id"` // null only when the CLI's block had no id
	Name       *string         `json:"name"`
	Input      json.RawMessage `json:"input"`
	InputError *string         `json:"input_error"`
	MessageID  *string         `json:"message_id"`
	Subagent   bool            `json:"subagent"`
	Kind       string          `json:"kind"`    // read, edit, delete, move, search, execute, think, fetch, switch_mode, subagent, plan, other
	Paths      []string        `json:"paths"`   // the files or directories the call touches
	Command    *string         `json:"command"` // a shell call's command
	Edit       json.RawMessage `json:"edit"`    // {path, changes: [{old, new}]} for an edit, else null
	Server     bool            `json:"server"`
}

// ToolResult is `tool.result`, naming its call.
type ToolResult struct {
	Event
	ToolUseID  *string         `json:"tool_use_id"`
	Name       *string         `json:"name"`
	IsError    bool            `json:"is_error"` // the agent's own verdict (false for a failed command on some agents)
	Server     bool            `json:"server"`
	Content    json.RawMessage `json:"content"`
	Structured json.RawMessage `json:"structured"`
	Kind       *string         `json:"kind"`      // the paired call's kind; null without a paired call
	Edit       json.RawMessage `json:"edit"`      // {path, patch} when the CLI's result carries a structured patch
	ExitCode   *int64          `json:"exit_code"` // a shell command's exit status where its agent states it, else null
}

// Usage is `usage`: one API message's token counts, once per message.
type Usage struct {
	Event
	MessageID    *string         `json:"message_id"`
	Model        *string         `json:"model"`
	Usage        map[string]any  `json:"usage"`
	Provisional  bool            `json:"provisional"`
	StopReason   json.RawMessage `json:"stop_reason"`
	StopSequence json.RawMessage `json:"stop_sequence"`
}

// TurnEnd is `turn.end`: one per result line.
type TurnEnd struct {
	Event
	Outcome           string          `json:"outcome"`
	Subtype           *string         `json:"subtype"`
	IsError           bool            `json:"is_error"`
	Result            json.RawMessage `json:"result"`
	CostUSD           *float64        `json:"cost_usd"`
	DurationMS        json.RawMessage `json:"duration_ms"`
	DurationAPIMS     json.RawMessage `json:"duration_api_ms"`
	NumTurns          json.RawMessage `json:"num_turns"`
	Usage             json.RawMessage `json:"usage"`
	ModelUsage        json.RawMessage `json:"model_usage"`
	PermissionDenials json.RawMessage `json:"permission_denials"`
	StopReason        json.RawMessage `json:"stop_reason"`
	TerminalReason    json.RawMessage `json:"terminal_reason"`
	Errors            json.RawMessage `json:"errors"`
	StructuredOutput  json.RawMessage `json:"structured_output"`
}

// Diagnostic is `diagnostic`: an input line that was not usable, accounted for.
type Diagnostic struct {
	Event
	Kind      string  `json:"kind"`
	Text      string  `json:"text"`
	Bytes     int64   `json:"bytes"`
	Truncated bool    `json:"truncated"`
	Detail    *string `json:"detail"`
}

// RunError is `run.error`: the run ended without a result line (exit status 3).
type RunError struct {
	Event
	Cause     string          `json:"cause"`
	Detail    string          `json:"detail"`
	EndCause  string          `json:"end_cause"`
	ExitCode  *int            `json:"exit_code"`
	LastEvent json.RawMessage `json:"last_event"`
}

// RunTotals is run.end's token totals.
type RunTotals struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	Provisional              bool  `json:"provisional"`
}

// RunStats is run.end's line accounting (stats.lines equals the input's lines).
type RunStats struct {
	Lines       int64            `json:"lines"`
	Bytes       int64            `json:"bytes"`
	JSONLines   int64            `json:"json_lines"`
	Events      int64            `json:"events"`
	Unknown     int64            `json:"unknown"`
	Diagnostics int64            `json:"diagnostics"`
	Repaired    int64            `json:"repaired"`
	ByType      map[string]int64 `json:"by_type"`
}

// RunEnd is `run.end`: always the last event.
type RunEnd struct {
	Event
	Cause        string    `json:"cause"`
	TerminalSeen bool      `json:"terminal_seen"`
	Turns        int64     `json:"turns"`
	CLIVersion   *string   `json:"cli_version"`
	Usage        RunTotals `json:"usage"`
	CostUSD      *float64  `json:"cost_usd"`
	APIMessages  int64     `json:"api_messages"`
	ToolCalls    int64     `json:"tool_calls"`
	ToolResults  int64     `json:"tool_results"`
	Stats        RunStats  `json:"stats"`
	// spawn only:
	ExitCode  *int     `json:"exit_code,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	ElapsedMS int64    `json:"elapsed_ms,omitempty"`
	Signals   []string `json:"signals_sent,omitempty"`
}

// PolicyViolation is `policy.violation` (spawn guards).
type PolicyViolation struct {
	Event
	Rule      string  `json:"rule"`
	Detail    string  `json:"detail"`
	Name      *string `json:"name"`
	ToolUseID *string `json:"tool_use_id"`
	Limit     *int64  `json:"limit"`
	Count     *int64  `json:"count"`
	Enforced  bool    `json:"enforced"`
}

// Other is any event type without a struct here: the common members and the whole line.
type Other struct {
	Event
	Raw json.RawMessage `json:"-"`
}

// Types maps each event type with a struct to a constructor (envelope_test.go checks each).
var Types = map[string]func() any{
	"session.init":     func() any { return new(SessionInit) },
	"text":             func() any { return new(Text) },
	"thinking":         func() any { return new(Thinking) },
	"tool.call":        func() any { return new(ToolCall) },
	"tool.result":      func() any { return new(ToolResult) },
	"usage":            func() any { return new(Usage) },
	"turn.end":         func() any { return new(TurnEnd) },
	"diagnostic":       func() any { return new(Diagnostic) },
	"run.error":        func() any { return new(RunError) },
	"run.end":          func() any { return new(RunEnd) },
	"policy.violation": func() any { return new(PolicyViolation) },
}

// Decode parses one envelope line into the struct for its type (a pointer, e.g. *ToolCall),
// or *Other.
func Decode(line []byte) (any, error) {
	var head Event
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("envelope line: %w", err)
	}
	if head.V != 1 {
		return nil, fmt.Errorf("envelope version %d: this code reads v1", head.V)
	}
	newEvent, ok := Types[head.Type]
	if !ok {
		return &Other{Event: head, Raw: append(json.RawMessage(nil), line...)}, nil
	}
	event := newEvent()
	if err := json.Unmarshal(line, event); err != nil {
		return nil, fmt.Errorf("%s event: %w", head.Type, err)
	}
	return event, nil
}
