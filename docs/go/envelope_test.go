// Checks envelope.go against `boo-normalize schema` and decodes a real capture's envelope.
// Needs BOO_NORMALIZE_BINARY (the binary) and BOO_FIXTURE (a stream-json file); the Rust test
// tests/docs_go.rs sets both.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
)

type schemaDoc struct {
	Defs map[string]struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"$defs"`
}

func binary(t *testing.T) string {
	bin := os.Getenv("BOO_NORMALIZE_BINARY")
	if bin == "" {
		t.Skip("BOO_NORMALIZE_BINARY not set")
	}
	return bin
}

var rawMessage = reflect.TypeOf(json.RawMessage(nil))

// fields: json name → Go type, through embedded structs.
func fields(t reflect.Type, into map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			fields(f.Type, into)
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		into[name] = f.Type
	}
}

// accepts: whether Go type g decodes every value the property schema allows.
func accepts(t *testing.T, prop json.RawMessage, g reflect.Type) bool {
	var s struct {
		Type  json.RawMessage `json:"type"`
		Const json.RawMessage `json:"const"`
		Enum  []any           `json:"enum"`
	}
	if err := json.Unmarshal(prop, &s); err != nil {
		t.Fatal(err)
	}
	if g == rawMessage || g.Kind() == reflect.Interface {
		return true
	}
	var types []string
	if len(s.Type) > 0 {
		var one string
		if json.Unmarshal(s.Type, &one) == nil {
			types = []string{one}
		} else if err := json.Unmarshal(s.Type, &types); err != nil {
			t.Fatal(err)
		}
	}
	switch {
	case len(s.Const) > 0:
		var v any
		_ = json.Unmarshal(s.Const, &v)
		switch v.(type) {
		case float64:
			types = []string{"integer"}
		case bool:
			types = []string{"boolean"}
		case string:
			types = []string{"string"}
		}
	case len(s.Enum) > 0:
		types = []string{"string"}
		for _, e := range s.Enum {
			switch e.(type) {
			case string:
			case nil:
				types = []string{"string", "null"} // a nullable enum takes a *string
			default:
				return false
			}
		}
	case len(types) == 0:
		return false // any value: only json.RawMessage or interface{} take it
	}
	nullable := false
	var kinds []string
	for _, ty := range types {
		if ty == "null" {
			nullable = true
		} else {
			kinds = append(kinds, ty)
		}
	}
	if nullable {
		if g.Kind() != reflect.Pointer && g.Kind() != reflect.Map && g.Kind() != reflect.Slice {
			return false
		}
	}
	if g.Kind() == reflect.Pointer {
		g = g.Elem()
	}
	if len(kinds) != 1 {
		return false
	}
	switch kinds[0] {
	case "string":
		return g.Kind() == reflect.String
	case "integer":
		switch g.Kind() {
		case reflect.Int, reflect.Int64, reflect.Uint64:
			return true
		}
	case "number":
		return g.Kind() == reflect.Float64
	case "boolean":
		return g.Kind() == reflect.Bool
	case "object":
		return g.Kind() == reflect.Struct || g.Kind() == reflect.Map
	case "array":
		return g.Kind() == reflect.Slice
	}
	return false
}

func TestTypesMatchTheSchema(t *testing.T) {
	out, err := exec.Command(binary(t), "schema").Output()
	if err != nil {
		t.Fatal(err)
	}
	var schema schemaDoc
	if err := json.Unmarshal(out, &schema); err != nil {
		t.Fatal(err)
	}
	common := schema.Defs["common"]
	names := make([]string, 0, len(Types))
	for name := range Types {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		def, ok := schema.Defs[name]
		if !ok {
			t.Errorf("%s: no such event type in the schema", name)
			continue
		}
		props := map[string]json.RawMessage{}
		for k, v := range common.Properties {
			props[k] = v
		}
		for k, v := range def.Properties {
			props[k] = v
		}
		got := map[string]reflect.Type{}
		fields(reflect.TypeOf(Types[name]()).Elem(), got)
		for member, g := range got {
			prop, ok := props[member]
			if !ok {
				t.Errorf("%s.%s: not a member in the schema", name, member)
			} else if !accepts(t, prop, g) {
				t.Errorf("%s.%s: Go type %s does not take the schema's %s", name, member, g, prop)
			}
		}
		for _, member := range append(append([]string{}, common.Required...), def.Required...) {
			if _, ok := got[member]; !ok {
				t.Errorf("%s: required member %s has no field", name, member)
			}
		}
	}
}

func TestDecodeARealCapture(t *testing.T) {
	fixture := os.Getenv("BOO_FIXTURE")
	if fixture == "" {
		t.Skip("BOO_FIXTURE not set")
	}
	out, err := exec.Command(binary(t), "normalize", fixture).Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	var last any
	reader := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := reader.ReadBytes('\n')
		if len(line) == 0 {
			break
		}
		event, derr := Decode(line)
		if derr != nil {
			t.Fatalf("%v: %s", derr, line)
		}
		if _, ok := event.(*Other); !ok {
			seen[reflect.TypeOf(event).Elem().Name()]++
		}
		last = event
		if err != nil {
			break
		}
	}
	end, ok := last.(*RunEnd)
	if !ok {
		t.Fatalf("last event %T, want *RunEnd", last)
	}
	if end.Stats.ByType["tool.call"] != int64(seen["ToolCall"]) || seen["ToolCall"] == 0 {
		t.Errorf("tool.call: %d decoded, run.end counts %d", seen["ToolCall"], end.Stats.ByType["tool.call"])
	}
	if seen["SessionInit"] != 1 || seen["TurnEnd"] == 0 {
		t.Errorf("decoded %v", seen)
	}
}
