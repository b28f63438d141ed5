package trace_test

import (
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/sim"
	"github.com/turnstile-dev/turnstile/trace"
)

// TestStreamLinesOnTheBytesAreTheDecodedOnes: a stream call's timeline line, read on the
// bytes of its data, is the line decoding the data gives, on every stream call of the curated
// suite and generated runs (all read on the bytes) and on data written otherwise (keys in
// another case, values of another type, spaces, duplicates), which must fall back to decoding.
func TestStreamLinesOnTheBytesAreTheDecodedOnes(t *testing.T) {
	streams := 0
	var samples []trace.Entry
	for _, sc := range linearCorpus(t) {
		tr, err := sim.Run(sc, sim.NewReference())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tr.Expanded().Entries {
			if e.Kind != trace.KindCall || e.Name != trace.CallStream {
				continue
			}
			streams++
			if !trace.ReadsStreamOnBytes(e) {
				t.Fatalf("%s: a stream call of the reference is not read on the bytes: %s", sc.Name, e.Data)
			}
			if got, want := trace.DescribeStream(e), trace.StreamLineByDecoding(e); got != want {
				t.Fatalf("%s:\non the bytes %s\ndecoded     %s", sc.Name, got, want)
			}
			if strings.Contains(string(e.Data), `"toolsAdded"`) && len(samples) < 20 {
				samples = append(samples, e)
			}
		}
	}
	if streams == 0 || len(samples) == 0 {
		t.Fatal("no stream calls declaring tools: the test checks nothing")
	}
	odd := []struct{ from, to string }{
		{`"role":`, `"Role":`},
		{`"role":"user"`, `"role":7`},
		{`"role":"user"`, `"role":null`},
		{`"name":`, `"Name":`},
		{`"name":`, `"NAME":`},
		{`"toolsAdded":[`, `"toolsAdded":null,"x":[`},
		{`"toolsAdded":`, `"ToolsAdded":`},
		{`"thinkingLevel":`, `"thinkinglevel":`},
		{`"thinkingLevel":"off"`, `"thinkingLevel":0`},
		{`"model":{`, `"model":{"ID":"x",`},
		{`"id":`, `"Id":`},
		{`"messages":[`, `"messages" : [ `},
		{`,"role":`, `, "role":`},
		{`"role":"user"`, `"role":"user","role":"assistant"`},
		{`"role":"user"`, `"role":"us\u0065r"`},
		{`"messages":[`, `"apiKey":1,"messages":[`},
		{`"messages":[`, `"messages":["x",`},
		{`"messages":[`, `"Messages":[`},
	}
	// Entries read from JSON lines written elsewhere are decoded: their data may hold a key
	// twice or text that is not UTF-8, which the bytes would read otherwise.
	for _, data := range []string{
		`{"messages":[{"role":"assistant","content":[]}],"messages":[{"role":"user","content":"x","timestamp":0}]}`,
		"{\"messages\":[{\"role\":\"us\xffer\",\"content\":\"x\",\"timestamp\":0}]}",
	} {
		line := `{"seq":1,"t":0,"kind":"call","name":"stream","target":"1","data":` + data + "}\n"
		read, err := trace.ReadJSONL([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := trace.DescribeStream(read.Entries[0]), trace.StreamLineByDecoding(read.Entries[0]); got != want {
			t.Errorf("%s:\nread %s\ndecoded %s", data, got, want)
		}
	}
	checked := 0
	for _, e := range samples {
		for _, o := range odd {
			if !strings.Contains(string(e.Data), o.from) {
				continue
			}
			f := e
			f.Data = []byte(strings.Replace(string(e.Data), o.from, o.to, 1))
			checked++
			if got, want := trace.DescribeStream(f), trace.StreamLineByDecoding(f); got != want {
				t.Errorf("%s -> %s:\non the bytes %s\ndecoded     %s", o.from, o.to, got, want)
			}
		}
	}
	if checked < len(odd) {
		t.Fatalf("only %d odd data checked", checked)
	}
}
