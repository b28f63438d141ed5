package scenarios_test

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/scenarios"
)

// hostile are scenario files that once took the loader out of memory or for minutes, each
// with the error it must give instead: "LINE:COL: start of the message".
var hostile = map[string]struct {
	data func() string
	want string
}{
	// 200 KB of flow lists nested 100,000 deep: the parser's memory grows with the square of
	// the depth.
	"deep-flow": {func() string {
		return "provider:\n  - {content: [{toolCall: {id: c1, name: t, arguments: {a: " +
			strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}}}]}\nrun: [go]\n"
	}, "2:153: mappings and lists nest more than 100 levels deep"},
	// Block mappings indented one column more each line.
	"deep-block": {func() string {
		var b strings.Builder
		b.WriteString("tools:\n  - name: t\n    description: T\n    parameters:\n")
		for i := range 150 {
			fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", 6+i))
		}
		return b.String()
	}, "102:104: mappings and lists nest more than 100 levels deep"},
	// Lists nested on one line: "- - - - x".
	"deep-dashes": {func() string {
		return "provider:\n  - " + strings.Repeat("- ", 200) + "x\n"
	}, "2:201: mappings and lists nest more than 100 levels deep"},
	// A 2 KB "billion laughs" in a tool's parameters: 10^9 strings once expanded.
	"alias-bomb": {func() string {
		var b strings.Builder
		b.WriteString("tools:\n  - name: t\n    description: T\n    parameters:\n      type: object\n      properties:\n")
		b.WriteString(`        a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
		for i := 1; i < 9; i++ {
			fmt.Fprintf(&b, "        a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
		}
		b.WriteString("    behaviour: {result: ok}\nprovider: [hi]\nrun: [go]\n")
		return b.String()
	}, "11:46: with its aliases expanded the file would hold more than 100,000 values"},
	// One long text copied by aliases: few nodes, but gigabytes of JSON.
	"alias-text": {func() string {
		return "tools:\n  - name: t\n    description: T\n    parameters: {a: &s \"" + strings.Repeat("x", 100_000) + "\", b: [" +
			strings.TrimSuffix(strings.Repeat("*s,", 100), ",") + "]}\nprovider: [hi]\nrun: [go]\n"
	}, "4:100152: with its aliases expanded the file would hold more than 100,000 values or 4 MiB of text"},
	// 100,000 keys in one block mapping: the parser copies the mapping once per key.
	"many-keys": {func() string {
		var b strings.Builder
		b.WriteString("tools:\n  - name: t\n    description: T\n    parameters:\n")
		for i := range 100_000 {
			fmt.Fprintf(&b, "      k%d: 1\n", i)
		}
		return b.String()
	}, "5005:7: this mapping has more than 5,000 keys"},
	// 150,000 list items: under the punctuation bound, over the tokens.
	"many-tokens": {func() string {
		return "tools:\n  - name: t\n    description: T\n    parameters: {a: [" + strings.Repeat("1,", 150_000) + "1]}\n"
	}, "4:100007: the file has more than 100,000 YAML tokens"},
	// A megabyte of commas is refused before the lexer spends 250 bytes on each.
	"punctuation": {func() string {
		return "provider: [" + strings.Repeat(",", 1<<20) + "]\n"
	}, "1:300010: the file has more than 300,000 lines and YAML punctuation marks"},
}

// TestHostileFilesGetAnErrorAtTheirLine: each hostile file is refused with its error,
// positioned where the file crosses the limit, in bounded memory.
func TestHostileFilesGetAnErrorAtTheirLine(t *testing.T) {
	for name, h := range hostile {
		t.Run(name, func(t *testing.T) {
			data := []byte(h.data())
			alloc := allocated(func() {
				_, err := scenarios.Parse("h.yaml", "h", data)
				if err == nil {
					t.Fatal("loaded")
				}
				if got := err.Error(); !strings.HasPrefix(got, "h.yaml:"+h.want) {
					t.Errorf("got  %.300s\nwant h.yaml:%s…", got, h.want)
				}
			})
			// The lexer alone takes some 250 bytes a token; the parser never runs.
			if limit := uint64(400 << 20); alloc > limit {
				t.Errorf("loading a %d-byte file allocated %d MB; limit %d MB", len(data), alloc>>20, limit>>20)
			}
		})
	}
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWithinTheLimitsLoads: a file just inside each limit loads (the limits refuse only what
// no scenario needs).
func TestWithinTheLimitsLoads(t *testing.T) {
	var keys strings.Builder
	for i := range scenarios.MaxMappingKeys {
		fmt.Fprintf(&keys, "      k%d: 1\n", i)
	}
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	files := map[string]string{
		// The tools list, its item and parameters open three levels; {a: …} a fourth.
		"deep": "tools:\n  - name: t\n    description: T\n    parameters: {a: " + nest(scenarios.MaxDepth-4) + "}\n    behaviour: {result: ok}\nprovider: [hi]\nrun: [go]\n",
		"keys": "tools:\n  - name: t\n    description: T\n    parameters:\n" + keys.String() + "    behaviour: {result: ok}\nprovider: [hi]\nrun: [go]\n",
		// Aliases that copy little stay allowed.
		"aliases": "provider:\n  - &r {text: hello, delay: 5}\n  - *r\n  - *r\nrun: [go, again, more]\n",
		// Punctuation in quoted and block text is counted, but a long text is far from it.
		"text": "provider:\n  - |\n" + strings.Repeat("    Hello, world: it's - as they say - {fine}.\n", 20_000) + "run: [go]\n",
	}
	for name, data := range files {
		if _, err := scenarios.Parse(name+".yaml", name, []byte(data)); err != nil {
			t.Errorf("%s: %.300v", name, err)
		}
	}
	deeper := "tools:\n  - name: t\n    description: T\n    parameters: {a: " + nest(scenarios.MaxDepth-3) + "}\n"
	if _, err := scenarios.Parse("d.yaml", "d", []byte(deeper)); err == nil || !strings.Contains(err.Error(), "levels deep") {
		t.Errorf("one level deeper: %.300v", err)
	}
}

// TestAnAliasNamesTheAnchorBeforeIt: an anchor name used twice stands, for each alias, for
// the nearest anchor before it (YAML's rule), not for the file's last one.
func TestAnAliasNamesTheAnchorBeforeIt(t *testing.T) {
	data := "provider:\n  - &r first\n  - *r\n  - &r second\n  - *r\nrun: [a, b, c, d]\n"
	f, err := scenarios.Parse("a.yaml", "a", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.Scenario.Responses {
		got = append(got, r.Content[0].(loop.TextContent).Text)
	}
	if want := "first first second second"; strings.Join(got, " ") != want {
		t.Errorf("responses %q, want %s", got, want)
	}
}

// TestAMillionDeltasValidateInBoundedMemory: a response streamed one character a delta,
// 10^6 deltas, is checked without building its stream (which took 600 MB).
func TestAMillionDeltasValidateInBoundedMemory(t *testing.T) {
	data := []byte("provider:\n  - {text: \"" + strings.Repeat("a", 1_000_000) + "\", deltaSize: 1, chunkDelay: 1}\nrun: [go]\n")
	var f *scenarios.File
	var err error
	alloc := allocated(func() { f, err = scenarios.Parse("d.yaml", "d", data) })
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Scenario.Responses[0]; r.DeltaSize != 1 {
		t.Fatalf("deltaSize %d", r.DeltaSize)
	}
	if limit := uint64(150 << 20); alloc > limit {
		t.Errorf("loading a 1 MB file allocated %d MB; limit %d MB", alloc>>20, limit>>20)
	}
}

// TestAnEndlessFileIsRefused: a file that never ends (/dev/zero) is read only up to the
// limit and refused.
func TestAnEndlessFileIsRefused(t *testing.T) {
	paths := []string{}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	for _, p := range paths {
		_, err := scenarios.Load([]string{p})
		if err == nil || !strings.Contains(err.Error(), p+": the file is larger than 4 MiB") {
			t.Errorf("%s: %v", p, err)
		}
	}
	_, err := scenarios.LoadFS(zeroFS{}, "zero.yaml")
	if err == nil || !strings.Contains(err.Error(), "zero.yaml: the file is larger than 4 MiB") {
		t.Errorf("endless file: %v", err)
	}
}

// zeroFS holds one endless file, zero.yaml.
type zeroFS struct{}

func (zeroFS) Open(name string) (fs.File, error) {
	if name != "zero.yaml" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return zeroFile{}, nil
}

type zeroFile struct{}

func (zeroFile) Stat() (fs.FileInfo, error) { return zeroInfo{}, nil }
func (zeroFile) Read(p []byte) (int, error) { clear(p); return len(p), nil }
func (zeroFile) Close() error               { return nil }

type zeroInfo struct{}

func (zeroInfo) Name() string       { return "zero.yaml" }
func (zeroInfo) Size() int64        { return 0 }
func (zeroInfo) Mode() fs.FileMode  { return 0o644 }
func (zeroInfo) ModTime() time.Time { return time.Time{} }
func (zeroInfo) IsDir() bool        { return false }
func (zeroInfo) Sys() any           { return nil }
