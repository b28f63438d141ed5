// Package scenarios reads scenario files — YAML, one scenario a file — into simulator
// scenarios, with strict decoding and every problem reported as file:line:col: message.
// The curated suite is embedded (Suite); scenarios/README.md documents the format and
// schema.json describes it for editors.
package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/turnstile-dev/turnstile/sim"
)

// File is one loaded scenario file.
type File struct {
	// Path is the file's path as given (slash-separated within a file system).
	Path string
	// Features is the file's features: list (nil without one); the loader has checked it
	// against sim.NeededFeatures.
	Features []string
	// Rel is the path relative to the root it was found under, without extension: the
	// scenario's default name and its golden file's name.
	Rel      string
	Scenario *sim.Scenario
	Expect   Expect
	// Rule is the rule the scenario pins down, from the file's leading "# Rule:" comment
	// (continued on the comment lines that follow it); "" when it has none.
	Rule string
	// Embedded is set for a file of the curated suite compiled into the binary.
	Embedded bool
	// Where the parts of the script are, for Warnings: each user action, each provider
	// response, and each behaviour's updates (by updateKey).
	actions, responses []position
	updates            map[string][]position
}

// RecoveredPanic starts the message of an error that stands for a panic of the YAML
// library on hostile input.
const RecoveredPanic = "unreadable YAML: the parser failed"

// Parse reads one scenario from data; filename is used in error messages and rel as the
// default name. The error, if any, is Errors.
func Parse(filename, rel string, data []byte) (f *File, err error) {
	defer func() {
		// The YAML library must not take the process down on hostile input.
		if p := recover(); p != nil {
			f, err = nil, Errors{{File: filename, Msg: fmt.Sprintf("%s (%v)", RecoveredPanic, p)}}
		}
	}()
	d := &decoder{file: filename}
	tokens, lerr := tokenize(filename, data)
	if lerr != nil {
		return nil, Errors{lerr}
	}
	astFile, perr := parser.Parse(tokens, 0)
	if perr != nil {
		return nil, Errors{yamlError(filename, perr)}
	}
	var docs []ast.Node
	for _, doc := range astFile.Docs {
		if doc.Body != nil {
			docs = append(docs, doc.Body)
		}
	}
	switch len(docs) {
	case 0:
		return nil, Errors{{File: filename, Msg: "the file is empty; a scenario file holds one YAML mapping"}}
	case 1:
	default:
		d.errorf(docs[1], "a scenario file holds one YAML document, this one has %d", len(docs))
		return nil, d.errs
	}
	sc := &sim.Scenario{Model: defaultModel}
	f = &File{Path: filename, Rel: rel, Scenario: sc}
	r := &refs{callIDs: map[string]ast.Node{}, dupCallIDs: map[string]bool{}, toolNames: map[string]ast.Node{}, undefinedTools: map[string]ast.Node{}, updates: map[string][]ast.Node{}}
	var aerr *Error
	if d.aliases, aerr = resolveAliases(filename, docs[0]); aerr != nil {
		return nil, Errors{aerr}
	}
	d.decodeScenario(docs[0], sc, f, r)
	if len(d.errs) == 0 {
		d.check(sc, r)
	}
	if len(d.errs) > 0 {
		sort.SliceStable(d.errs, func(i, j int) bool {
			a, b := d.errs[i], d.errs[j]
			return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
		})
		return nil, d.errs
	}
	if sc.Name == "" {
		sc.Name = rel
	}
	f.Rule = ruleComment(data)
	for _, a := range r.actions {
		f.actions = append(f.actions, positionOf(a.n))
	}
	for _, n := range r.responses {
		f.responses = append(f.responses, positionOf(n))
	}
	f.updates = map[string][]position{}
	for k, ns := range r.updates {
		for _, n := range ns {
			f.updates[k] = append(f.updates[k], positionOf(n))
		}
	}
	return f, nil
}

// ruleComment reads the leading "# Rule: …" comment of a scenario file, joining the comment
// lines that continue it (up to a blank comment line or one starting with "pi:").
func ruleComment(data []byte) string {
	if !bytes.HasPrefix(data, []byte("# Rule:")) {
		return ""
	}
	// Only the leading comment lines are read: no copy of the whole file.
	var lines []string
	for rest := data; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			break
		}
		lines, rest = append(lines, string(line)), after
	}
	parts := []string{strings.TrimSpace(strings.TrimPrefix(lines[0], "# Rule:"))}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(strings.TrimRight(l, "\r"))
		if !strings.HasPrefix(l, "#") {
			break
		}
		l = strings.TrimSpace(strings.TrimPrefix(l, "#"))
		if l == "" || strings.HasPrefix(l, "pi:") || strings.HasPrefix(l, "pi ") {
			break
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}

// defaultModel is the model of a scenario that names none.
var defaultModel = sim.DefaultModel

// yamlError positions an error of the YAML library.
func yamlError(filename string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{File: filename, Msg: "YAML: " + ye.GetMessage() + yamlHint(ye.GetMessage())}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		}
		return e
	}
	return &Error{File: filename, Msg: err.Error()}
}

// yamlHints say what the YAML parser's terser messages usually mean in a scenario file.
var yamlHints = []struct{ prefix, hint string }{
	{"value is not allowed in this context", "this line is indented differently from the lines around it: a key goes in the column of the keys beside it"},
	{"found character '\t'", "YAML indents with spaces, not tabs"},
	{"unexpected key name", "a line of a mapping is key: value, with a space after the colon"},
}

// yamlHint is the hint in parentheses for a YAML parser message, or "".
func yamlHint(msg string) string {
	for _, h := range yamlHints {
		if strings.HasPrefix(msg, h.prefix) {
			return " (" + h.hint + ")"
		}
	}
	return ""
}

// IsScenarioFile reports whether a file name is a scenario file (.yaml or .yml).
func IsScenarioFile(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// LoadFS loads the scenario files at or under root in fsys, sorted by path. Files in
// folders named testdata are skipped. It returns every file it could load and, joined,
// the errors of those it could not.
func LoadFS(fsys fs.FS, root string) ([]*File, error) {
	var files []*File
	var errs []error
	info, err := fs.Stat(fsys, root)
	if err != nil {
		return nil, err
	}
	load := func(p string) {
		data, err := readLimited(fsys, p)
		if err != nil {
			errs = append(errs, err)
			return
		}
		rel := strings.TrimSuffix(p, path.Ext(p))
		if info.IsDir() {
			rel = strings.TrimPrefix(strings.TrimPrefix(rel, root), "/")
		} else {
			rel = strings.TrimSuffix(path.Base(p), path.Ext(p))
		}
		f, err := Parse(p, rel, data)
		if err != nil {
			errs = append(errs, err)
			return
		}
		files = append(files, f)
	}
	if !info.IsDir() {
		load(root)
		return files, errors.Join(errs...)
	}
	err = fs.WalkDir(fsys, root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() && de.Name() == "testdata" && p != root {
			return fs.SkipDir
		}
		if !de.IsDir() && IsScenarioFile(p) {
			load(p)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return files, errors.Join(errs...)
}

// LoadPath loads a scenario file, or every scenario file under a directory, from the
// operating system's file system.
func LoadPath(p string) ([]*File, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	dir, root := filepath.Split(abs)
	fsys := os.DirFS(dir)
	files, lerr := LoadFS(fsys, root)
	// Report paths as the user gave them; name scenarios by their path under the nearest
	// folder called scenarios, as the curated suite does, so that names and golden files
	// agree however a file was reached.
	prefix := filepath.ToSlash(filepath.Clean(p))
	for _, f := range files {
		full := filepath.ToSlash(filepath.Join(dir, f.Path))
		if info.IsDir() {
			f.Path = prefix + strings.TrimPrefix(f.Path, root)
		} else {
			f.Path = prefix
		}
		if rel, ok := underScenarios(full); ok {
			if f.Scenario.Name == f.Rel {
				f.Scenario.Name = rel
			}
			f.Rel = rel
		}
	}
	if lerr != nil {
		return files, rewritePaths(lerr, root, prefix)
	}
	return files, nil
}

// underScenarios is a file's path under the nearest folder named scenarios, without
// extension.
func underScenarios(slashPath string) (string, bool) {
	i := strings.LastIndex(slashPath, "/scenarios/")
	if i < 0 {
		return "", false
	}
	rest := slashPath[i+len("/scenarios/"):]
	return strings.TrimSuffix(rest, path.Ext(rest)), true
}

// rewritePaths turns file-system-relative names in load errors back into the user's paths.
func rewritePaths(err error, root, prefix string) error {
	var out []error
	var visit func(error)
	visit = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				visit(x)
			}
			return
		}
		var es Errors
		if errors.As(e, &es) {
			for _, x := range es {
				x.File = prefix + strings.TrimPrefix(x.File, root)
			}
		}
		out = append(out, e)
	}
	visit(err)
	return errors.Join(out...)
}

// Load loads the scenario files at the given paths (files or directories), or the embedded
// curated suite when there are none. A path that does not exist names a scenario or a
// family of the embedded suite ("truncation/basic", "truncation"), so suite names work from
// any directory. Bad files make the error, which lists every problem.
func Load(paths []string) ([]*File, error) {
	if len(paths) == 0 {
		return Suite()
	}
	var all []*File
	var errs []error
	for _, p := range paths {
		files, err := LoadPath(p)
		if errors.Is(err, fs.ErrNotExist) {
			if _, _, ok := SuitePath(p); ok {
				files, err = SuiteNamed(p)
			} else {
				err = fmt.Errorf("%s: no such file, directory or scenario of the embedded suite (turnstile show lists them)", p)
			}
		}
		all = append(all, files...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return all, errors.Join(errs...)
}

// SuitePath is the file of the embedded suite that a name stands for: a scenario
// ("truncation/basic", with or without .yaml) or a family folder ("truncation"); ok is
// false when the suite has no such name.
func SuitePath(name string) (p string, dir bool, ok bool) {
	name = strings.Trim(path.Clean(filepath.ToSlash(name)), "/")
	name = strings.TrimPrefix(name, "scenarios/")
	if name == "" || name == "." || strings.HasPrefix(name, "..") {
		return "", false, false
	}
	for _, c := range []string{name, name + ".yaml"} {
		if info, err := fs.Stat(suiteFS, c); err == nil {
			return c, info.IsDir(), info.IsDir() || IsScenarioFile(c)
		}
	}
	return "", false, false
}

// SuiteNamed loads the embedded scenarios a name stands for (see SuitePath), named and
// placed as in the whole suite.
func SuiteNamed(name string) ([]*File, error) {
	p, _, ok := SuitePath(name)
	if !ok {
		return nil, fmt.Errorf("%s: no such scenario or family in the embedded suite", name)
	}
	all, err := Suite()
	var out []*File
	for _, f := range all {
		if f.Path == p || strings.HasPrefix(f.Path, p+"/") {
			out = append(out, f)
		}
	}
	return out, err
}
