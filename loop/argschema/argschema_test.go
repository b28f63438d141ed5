package argschema

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// piCase is one expectation produced by running pi (testdata/pi-expect.mjs).
type piCase struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Args   json.RawMessage `json:"args"`
	OK     bool            `json:"ok"`
	Value  json.RawMessage `json:"value"`
	Errors []struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	} `json:"errors"`
	Throws       *string `json:"throws"`
	Tool         string  `json:"tool"`
	Message      *string `json:"message"`
	CompileError *string `json:"compileError"`
}

func loadPiCases(t *testing.T) []piCase {
	t.Helper()
	data, err := os.ReadFile("testdata/pi-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []piCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases in testdata/pi-cases.json", len(cases))
	}
	return cases
}

func expectedErrors(c piCase) []Error {
	var errs []Error
	for _, e := range c.Errors {
		errs = append(errs, Error{Path: e.Path, Message: e.Message})
	}
	return errs
}

// decodeAny decodes JSON the way callers of the package do.
func decodeAny(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPiCases checks every case against pi's own output, with schema and arguments given as json.RawMessage so
// their key order is pi's.
func TestPiCases(t *testing.T) {
	for _, c := range loadPiCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			v, err := Compile(c.Schema)
			if c.CompileError != nil {
				if err == nil {
					t.Fatalf("Compile succeeded; pi throws %q", *c.CompileError)
				}
				if strings.HasPrefix(*c.CompileError, "A schema must be") && !strings.Contains(err.Error(), *c.CompileError) {
					t.Errorf("Compile error %q does not contain pi's %q", err, *c.CompileError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, errs := v.Parse(c.Args)
			if c.Throws != nil {
				// pi's parse() throws; Parse reports the exception's message as the one error.
				if want := []Error{{Path: "", Message: *c.Throws}}; got != nil || !reflect.DeepEqual(errs, want) {
					t.Errorf("Parse = %#v, %q; pi throws %q", got, errs, *c.Throws)
				}
				return
			}
			if c.OK {
				if errs != nil {
					t.Fatalf("Parse errors %v; pi accepts with %s", errs, c.Value)
				}
				if want := decodeAny(t, c.Value); !reflect.DeepEqual(got, want) {
					t.Errorf("Parse value %#v; pi gives %#v", got, want)
				}
			} else if want := expectedErrors(c); !reflect.DeepEqual(errs, want) {
				t.Errorf("Parse errors\n got %q\nwant %q", errs, want)
			}
			if c.Tool != "" {
				if c.Message == nil {
					t.Fatal("pi accepted a message case")
				}
				if got := Message(c.Tool, errs, c.Args); got != *c.Message {
					t.Errorf("Message\n got %q\nwant %q", got, *c.Message)
				}
			}
		})
	}
}

// TestPiCasesFromMaps runs the same cases with schema and arguments as map[string]any, which have no key order:
// acceptance and the coerced value must not change, and the errors only in their order.
func TestPiCasesFromMaps(t *testing.T) {
	for _, c := range loadPiCases(t) {
		if c.CompileError != nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			args := decodeAny(t, c.Args)
			before, _ := json.Marshal(args)
			v, err := Compile(decodeAny(t, c.Schema))
			if err != nil {
				t.Fatal(err)
			}
			got, errs := v.Parse(args)
			if after, _ := json.Marshal(args); string(after) != string(before) {
				t.Errorf("Parse modified its argument: %s became %s", before, after)
			}
			if c.Throws != nil {
				return
			}
			if c.OK {
				if want := decodeAny(t, c.Value); errs != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("Parse = %#v, %v; pi gives %#v", got, errs, want)
				}
				return
			}
			sortErrors := func(list []Error) []Error {
				out := append([]Error(nil), list...)
				sort.Slice(out, func(i, j int) bool { return out[i].Path+out[i].Message < out[j].Path+out[j].Message })
				return out
			}
			if want := sortErrors(expectedErrors(c)); !reflect.DeepEqual(sortErrors(errs), want) {
				t.Errorf("Parse errors\n got %q\nwant %q", errs, want)
			}
		})
	}
}

func TestFormatPath(t *testing.T) {
	for _, tc := range []struct{ pointer, want string }{
		{"", "root"},
		{"/edits/0/oldText", "edits.0.oldText"},
		{"/a~1b/c~0d", "a/b.c~d"},
		{"/~01", "~1"},
		{"/", ""},
	} {
		if got := FormatPath(tc.pointer); got != tc.want {
			t.Errorf("FormatPath(%q) = %q, want %q", tc.pointer, got, tc.want)
		}
	}
}

// TestMessageFromMap checks the documented difference of Message for maps: keys in sorted order.
func TestMessageFromMap(t *testing.T) {
	args := map[string]any{"b": 1.0, "a": []any{42.0, 1e21, 0.5, "x"}, "10": nil, "2": map[string]any{}}
	errs := []Error{{Path: "", Message: "expected object, got array"}, {Path: "/a/0", Message: "missing"}}
	want := "Validation failed for tool \"t\":\n  - root: expected object, got array\n  - a.0: missing\n\n" +
		"Received arguments:\n{\n  \"2\": {},\n  \"10\": null,\n  \"a\": [\n    42,\n    1e+21,\n    0.5,\n    \"x\"\n  ],\n  \"b\": 1\n}"
	if got := Message("t", errs, args); got != want {
		t.Errorf("Message\n got %q\nwant %q", got, want)
	}
}

func TestJSNumber(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {42, "42"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {1e21, "1e+21"}, {1.5e21, "1.5e+21"}, {123456789012345680000, "123456789012345680000"},
		{0.000001, "0.000001"}, {1e-7, "1e-7"}, {1.25e-7, "1.25e-7"}, {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
	} {
		if got := jsNumber(tc.f); got != tc.want {
			t.Errorf("jsNumber(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestCompileRejectsNonSchema(t *testing.T) {
	for _, schema := range []any{nil, 5.0, "x", []any{}} {
		if _, err := Compile(schema); err == nil || !strings.Contains(err.Error(), "A schema must be an object or a boolean") {
			t.Errorf("Compile(%#v) error = %v", schema, err)
		}
	}
}

// TestParseConcurrent runs one validator from many goroutines (go test -race checks the locking).
func TestParseConcurrent(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1},
		"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"}}},"required":["n"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				if got, errs := v.Parse(map[string]any{"n": "3", "tags": "abc"}); errs != nil ||
					!reflect.DeepEqual(got, map[string]any{"n": 3.0, "tags": []any{"abc"}}) {
					done <- fmt.Errorf("valid call: %#v %v", got, errs)
					return
				}
				if _, errs := v.Parse(map[string]any{"n": 0.0, "x": 1.0}); len(errs) != 2 {
					done <- fmt.Errorf("invalid call: %v", errs)
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
