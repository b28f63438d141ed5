//go:build go1.26 && !go1.27

package porttest

import (
	"errors"
	"flag"
	"io"
	"os"
	"reflect"
	"regexp"
	"testing"
	"testing/synctest"
	"time"
)

// withBubbles runs body with a function that runs f inside a new testing/synctest bubble,
// outside go test: testing.MainStart gives the one *testing.T that synctest.Test needs. A
// bubble sees a port's own goroutines, channels and timers, so Serve knows a port is
// idle as Test does. MainStart is not covered by the Go 1 promise: this file builds with Go
// 1.26 only, and bubble_other.go serves without bubbles elsewhere.
//
// While body runs, os.Stdout is os.Stderr (the testing package's own lines, and any stray
// print of the port, must not reach the protocol's stream) and flag.CommandLine is a set of
// the testing flags alone, parsed empty (the adapter's own arguments are not test flags).
func withBubbles(body func(bubble func(f func())) error) error {
	stdout, flags := os.Stdout, flag.CommandLine
	os.Stdout = os.Stderr
	flag.CommandLine = flag.NewFlagSet("conformance", flag.ContinueOnError)
	defer func() { os.Stdout, flag.CommandLine = stdout, flags }()
	var err error
	ran := false
	m := testing.MainStart(testDeps{}, []testing.InternalTest{{Name: "Serve", F: func(t *testing.T) {
		ran = true
		err = body(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
	}}}, nil, nil, nil)
	_ = flag.CommandLine.Parse(nil)
	m.Run()
	if !ran {
		return errors.New("the testing package did not run the server (a -test.run or -test.skip flag given to the adapter?)")
	}
	return err
}

// corpusEntry is the testing package's (an alias of an unnamed struct, so it can be named here).
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

// testDeps is what testing.MainStart needs of a test binary: nothing here profiles, fuzzes
// or measures coverage.
type testDeps struct{}

func (testDeps) ImportPath() string                          { return "" }
func (testDeps) ModulePath() string                          { return "" }
func (testDeps) MatchString(pat, str string) (bool, error)   { return regexp.MatchString(pat, str) }
func (testDeps) SetPanicOnExit0(bool)                        {}
func (testDeps) StartCPUProfile(io.Writer) error             { return nil }
func (testDeps) StopCPUProfile()                             {}
func (testDeps) StartTestLog(io.Writer)                      {}
func (testDeps) StopTestLog() error                          { return nil }
func (testDeps) WriteProfileTo(string, io.Writer, int) error { return nil }
func (testDeps) ResetCoverage()                              {}
func (testDeps) SnapshotCoverage()                           {}
func (testDeps) CheckCorpus([]any, []reflect.Type) error     { return nil }
func (testDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errors.New("no fuzzing here")
}
func (testDeps) RunFuzzWorker(func(corpusEntry) error) error { return errors.New("no fuzzing here") }
func (testDeps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, nil
}
func (testDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
