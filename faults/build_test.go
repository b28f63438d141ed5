package faults_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

const module = "github.com/turnstile-dev/turnstile/"

// buildFaulty builds into dir the one binary the faults' tests run, and returns its path: the
// test binary (`go test -c`) of faults/faultyport, a package that exists only in the overlay
// written here. The same overlay puts every fault's seam into the repository's sources
// (loop/, agent/, sim/), each behind a switch read from faultsEnv, so that no other build
// holds a fault or its switch. Run with the argument roleReference, the binary serves the
// reference as `turnstile adapter` does; with roleExample, the example Go port as
// conformance/example/adapter does; otherwise it is faultyport's own test: porttest.Test
// of the example port over a copy of loop/ whose switches are read from portFaultsEnv.
func buildFaulty(dir string) (string, error) {
	here, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	replace := map[string]string{}
	n := 0
	add := func(target, text string) error {
		n++
		file := filepath.Join(dir, fmt.Sprintf("%d-%s", n, filepath.Base(target)))
		replace[target] = file
		return os.WriteFile(file, []byte(text), 0o644)
	}
	// Every fault's seam, in the order of allFaults; faults patching the same text keep it.
	texts := map[string]string{}
	for _, f := range allFaults() {
		if _, ok := texts[f.file]; !ok {
			data, err := os.ReadFile(f.path())
			if err != nil {
				return "", err
			}
			texts[f.file] = string(data)
		}
		for _, p := range f.patches {
			if n := strings.Count(texts[f.file], p.old); n != 1 {
				return "", fmt.Errorf("the patch for %q no longer applies: %s holds its text %d times; update it", f.name, f.path(), n)
			}
			if !strings.Contains(p.new, "@ON") {
				return "", fmt.Errorf("a patch of %q has no @ON: the fault would be on in every run", f.name)
			}
			texts[f.file] = strings.Replace(texts[f.file], p.old, strings.ReplaceAll(p.new, "@ON", fmt.Sprintf("faultOn(%q)", f.name)), 1)
		}
	}
	switches := map[string]string{} // the patched packages' directories, each with its package's name
	for file, text := range texts {
		src, err := filepath.Abs(fault{file: file}.path())
		if err != nil {
			return "", err
		}
		if err := add(src, text); err != nil {
			return "", err
		}
		m := packageClause.FindStringSubmatch(text)
		if m == nil {
			return "", fmt.Errorf("%s: no package clause", src)
		}
		switches[filepath.Dir(src)] = m[1]
	}
	for pkgDir, pkg := range switches {
		if err := add(filepath.Join(pkgDir, "zz_faultswitch.go"), faultSwitch(pkg, faultsEnv)); err != nil {
			return "", err
		}
	}
	// faultyport/loop: every source file of loop/, with its seams, switched by portFaultsEnv.
	sources, err := filepath.Glob(filepath.Join("..", "loop", "*.go"))
	if err != nil {
		return "", err
	}
	for _, src := range sources {
		name := filepath.Base(src)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		text, ok := texts[name]
		if !ok {
			data, err := os.ReadFile(src)
			if err != nil {
				return "", err
			}
			text = string(data)
		}
		if err := add(filepath.Join(here, "faultyport", "loop", name), text); err != nil {
			return "", err
		}
	}
	if err := add(filepath.Join(here, "faultyport", "loop", "zz_faultswitch.go"), faultSwitch("loop", portFaultsEnv)); err != nil {
		return "", err
	}
	// The port: the example's, over the faulty loop.
	example, err := os.ReadFile(filepath.Join("..", "conformance", "example", "example.go"))
	if err != nil {
		return "", err
	}
	port := strings.Replace(string(example), `"`+module+`loop"`, `"`+module+`faults/faultyport/loop"`, 1)
	port = strings.Replace(port, "package example", "package faultyport", 1)
	// piwire's types are loop's: the faulty port gets a copy over the faulty loop, and the
	// setup's identity (the real loop's type) is converted through its JSON.
	wire, err := os.ReadFile(filepath.Join("..", "conformance", "piwire", "piwire.go"))
	if err != nil {
		return "", err
	}
	port = strings.Replace(port, `"`+module+`conformance/piwire"`, `"`+module+`faults/faultyport/piwire"`, 1)
	port = strings.Replace(port, "Identity: s.Identity", "Identity: faultyIdentity(s.Identity)", 1)
	for target, text := range map[string]string{
		filepath.Join(here, "faultyport", "piwire", "piwire.go"): strings.Replace(string(wire), `"`+module+`loop"`, `"`+module+`faults/faultyport/loop"`, 1),
		filepath.Join(here, "faultyport", "identity.go"):         identitySource,
		filepath.Join(here, "faultyport", "port.go"):             port,
		filepath.Join(here, "faultyport", "port_test.go"):        portTestSource,
	} {
		if err := add(target, text); err != nil {
			return "", err
		}
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	// Built with -c and run from here: the package's folder exists only in the overlay.
	bin := filepath.Join(dir, "faulty.test")
	var out bytes.Buffer
	cmd := exec.Command("go", "test", "-c", "-vet=off", "-overlay", ov, "-o", bin, "./faultyport/")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the faulty binary: %v\n%s", err, out.String())
	}
	return bin, nil
}

var packageClause = regexp.MustCompile(`(?m)^package (\w+)$`)

// faultSwitch is the source of faultOn in package pkg: whether a fault is named in env.
func faultSwitch(pkg, env string) string {
	return `package ` + pkg + `

import (
	faultsos "os"
	faultsstrings "strings"
)

// faultsOn are the faults switched on in this process. This file exists only in the overlay
// of the faults package's tests.
var faultsOn = faultsstrings.Split(faultsos.Getenv("` + env + `"), "|")

func faultOn(name string) bool {
	for _, n := range faultsOn {
		if n == name {
			return true
		}
	}
	return false
}
`
}

const identitySource = `package faultyport

import (
	"encoding/json"

	"github.com/turnstile-dev/turnstile/faults/faultyport/loop"
	real "github.com/turnstile-dev/turnstile/loop"
)

func faultyIdentity(id *real.Identity) *loop.Identity {
	if id == nil {
		return nil
	}
	data, _ := json.Marshal(id)
	out := &loop.Identity{}
	_ = json.Unmarshal(data, out)
	return out
}
`

// portTestSource is faultyport's test, and the binary's other roles (see buildFaulty).
const portTestSource = `package faultyport_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
	"github.com/turnstile-dev/turnstile/conformance/protocol"
	"github.com/turnstile-dev/turnstile/faults/faultyport"
	"github.com/turnstile-dev/turnstile/internal/gctarget"
)

func TestMain(m *testing.M) {
	role := ""
	if len(os.Args) > 1 {
		role = os.Args[1]
	}
	// The CLI's GC target, for the roles and for the port's own test.
	gctarget.Set()
	serve := map[string]func() error{
		"` + roleReference + `": func() error { return protocol.Serve(os.Stdin, os.Stdout) },
		"` + roleExample + `":   func() error { return porttest.Serve(os.Stdin, os.Stdout, example.Port{}) },
	}[role]
	if serve == nil {
		os.Exit(m.Run())
	}
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func TestConformance(t *testing.T) { porttest.Test(t, faultyport.Port{}) }
`
