package porttest_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxDocLines is the most lines go doc -short of the package may print: one screen.
const maxDocLines = 25

// TestDocFitsOneScreen counts the lines go doc -short prints (a line per constant or
// variable group, function and type, and one per function listed under its type), checks
// every exported name has a doc comment, and checks the count against go doc itself.
func TestDocFitsOneScreen(t *testing.T) {
	lines := shortDoc(t)
	if len(lines) > maxDocLines {
		t.Errorf("go doc -short of porttest is %d lines, want at most %d: %s", len(lines), maxDocLines, strings.Join(lines, " "))
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run go doc with")
	}
	out, err := exec.Command(gobin, "doc", "-short", ".").Output()
	if err != nil {
		t.Fatalf("go doc -short: %v", err)
	}
	if n := strings.Count(string(out), "\n"); n != len(lines) {
		t.Errorf("go doc -short prints %d lines, the count here %d:\n%s", n, len(lines), out)
	}
}

// shortDoc is the package's exported names as go doc -short lists them, one per line.
func shortDoc(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/turnstile-dev/turnstile/conformance/porttest")
	if err != nil {
		t.Fatal(err)
	}
	if p.Doc == "" {
		t.Error("package porttest has no doc comment")
	}
	var lines []string
	add := func(name, comment string) {
		lines = append(lines, name)
		if comment == "" {
			t.Errorf("%s has no doc comment", name)
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			add(strings.Join(v.Names, ", "), v.Doc)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			add(f.Name, f.Doc)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, ty := range p.Types {
		add(ty.Name, ty.Doc)
		values(ty.Consts)
		values(ty.Vars)
		funcs(ty.Funcs)
	}
	return lines
}
