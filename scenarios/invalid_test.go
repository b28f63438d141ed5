package scenarios_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turnstile-dev/turnstile/scenarios"
)

// TestInvalidCorpus loads every file of testdata/invalid, each of which starts with
// "# want: LINE:COL: message", and requires exactly that first error.
func TestInvalidCorpus(t *testing.T) {
	paths, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 20 {
		t.Fatalf("the invalid corpus has %d files; it must keep at least 20", len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("%s must start with '# want: LINE:COL: message'", p)
			}
			_, err = scenarios.Parse(p, "x", data)
			if err == nil {
				t.Fatalf("%s loaded without error; want %s", p, want)
			}
			got, _, _ := strings.Cut(err.Error(), "\n")
			sep := ":"
			if !strings.Contains(want, ":") || !strings.ContainsAny(want[:1], "0123456789") {
				sep = ": "
			}
			if got != p+sep+want {
				t.Errorf("first error:\n got %s\nwant %s", got, p+sep+want)
			}
		})
	}
}

// FuzzParse feeds the loader mutated scenario files; it must never panic and every error
// must be positioned within the file.
func FuzzParse(f *testing.F) {
	seed := func(fsys fs.FS, root string) {
		_ = fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && scenarios.IsScenarioFile(p) {
				data, _ := fs.ReadFile(fsys, p)
				f.Add(data)
			}
			return nil
		})
	}
	seed(scenarios.SuiteFS(), ".")
	seed(os.DirFS("testdata"), "invalid")
	// Bounds: the small hostile files, and an anchor used inside itself.
	for _, h := range hostile {
		if data := h.data(); len(data) < 64<<10 {
			f.Add([]byte(data))
		}
	}
	f.Add([]byte("tools:\n  - name: t\n    description: T\n    parameters: &a {x: [*a]}\n    behaviour: {result: ok}\nprovider: [hi]\nrun: [go]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := scenarios.Parse("fuzz.yaml", "fuzz", data)
		if err == nil {
			return
		}
		if strings.Contains(err.Error(), scenarios.RecoveredPanic) {
			t.Fatalf("the loader panicked: %v", err)
		}
		if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
			t.Fatalf("error without the file name: %v", err)
		}
	})
}

// TestAMistypedKeyIsOneError: a user action with a mistyped key gets that error alone, not
// also the errors of the key it lacks (a stranger's review: "stear" also said the action must
// steer, followUp or abort; "a" also said it needs at: or on:).
func TestAMistypedKeyIsOneError(t *testing.T) {
	for _, name := range []string{"user-action-typo.yaml", "user-action-when-typo.yaml"} {
		p := filepath.Join("testdata/invalid", name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = scenarios.Parse(p, "x", data)
		if errs, ok := err.(scenarios.Errors); !ok || len(errs) != 1 || !strings.Contains(errs[0].Msg, "did you mean") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
