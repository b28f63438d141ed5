package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium to drive, or skips the test. CI installs Debian's (.ci/run).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on this machine: install it (Debian: apt-get install -y chromium) to run the browser tests")
	return ""
}

// browser is the headless Chromium the browser tests share, each page in a tab of its own:
// starting Chromium is most of a browser test's CPU. TestMain closes it.
var browser struct {
	once   sync.Once
	ctx    context.Context // the browser's; a tab's is made from it
	cancel func()
	err    error
}

// startTimeout bounds Chromium's start and each tab's work.
const startTimeout = 4 * time.Minute

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// browserPage opens file in a new tab of the shared headless Chromium and fails the test on
// any uncaught exception or console error of the page. It returns the tab's context.
func browserPage(t *testing.T, file string) context.Context {
	t.Helper()
	exe := chromium(t)
	browser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(exe),
			chromedp.NoSandbox,
			chromedp.WindowSize(1600, 1000),
			chromedp.Flag("disable-gpu", true),
		)
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		browser.ctx, browser.cancel = bctx, func() { cancelBrowser(); cancelAlloc() }
		started := make(chan error, 1)
		go func() { started <- chromedp.Do(bctx) }() // starts Chromium
		select {
		case browser.err = <-started:
		case <-time.After(startTimeout): // generous: Chromium starts slowly on a loaded machine
			browser.cancel()
			browser.err = fmt.Errorf("Chromium did not start in %s", startTimeout)
		}
	})
	if browser.err != nil {
		t.Fatalf("starting Chromium: %v", browser.err)
	}
	ctx, cancelTab := chromedp.NewContext(browser.ctx)
	// Generous: Chromium renders slowly on a loaded machine.
	ctx, cancelTime := context.WithTimeout(ctx, startTimeout)
	t.Cleanup(func() { cancelTime(); cancelTab() })

	// Every console error, uncaught exception and browser-log error of the page (a resource
	// that failed to load among them) fails the test.
	var mu sync.Mutex
	var problems []string
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate("file://"+abs),
		chromedp.WaitReady(chromedp.CSS(`html[data-ready="1"]`)),
	); err != nil {
		t.Fatalf("loading %s in Chromium: %v", file, err)
	}
	t.Cleanup(func() {
		cancelTime()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("%s: %s", filepath.Base(file), p)
		}
	})
	return ctx
}

// screenshot saves a full-page screenshot of the tab as name, in $REPORT_SCREENSHOTS when
// set (for CI artifacts and for looking at the page), else in the test's temporary directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 1000 {
		t.Fatalf("screenshot of %d bytes", len(png))
	}
	dir := os.Getenv("REPORT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run of a faulty implementation beside the reference: the page loads without errors,
// shows the lanes of every actor, marks the first divergence where the faulty loop left out
// a turn_end, marks the findings on their rows, and shows an entry's JSON on click.
func TestBrowserRunPage(t *testing.T) {
	chromium(t)
	run := faultyRun(t, "queues/follow-up-one-at-a-time")
	if len(run.Findings) == 0 {
		t.Fatal("the faulty run breaks no invariant: the test needs one")
	}
	file := filepath.Join(t.TempDir(), "run.html")
	writePage(t, file, Page{Title: "faulty run", Runs: []Run{run}})
	ctx := browserPage(t, file)

	lanes := eval[[]string](t, ctx, `(() => { const th = Array.from(document.querySelectorAll("tr.lanes th.ln")); return th.slice(0, th.length/2).map(x => x.innerText.trim()); })()`)
	firstExpected := eval[string](t, ctx, `document.querySelectorAll("tr.first td.txt")[0].innerText.trim()`)
	firstActual := eval[string](t, ctx, `document.querySelectorAll("tr.first td.txt")[1].innerText.trim()`)
	findRows := eval[int](t, ctx, `document.querySelectorAll("tr.find").length`)
	shownRules := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("tr.find .finding b")).map(b => b.innerText)`)
	stops := eval[string](t, ctx, `document.documentElement.getAttribute("data-stops")`)

	want := []string{"loop events", "hooks", "user", "streams"}
	if len(lanes) < len(want) {
		t.Fatalf("lanes %q, want at least %q", lanes, want)
	}
	for i, w := range want {
		if lanes[i] != w {
			t.Errorf("lane %d is %q, want %q (lanes %q)", i, lanes[i], w, lanes)
		}
	}
	// The reference ends its first turn where the faulty loop does not.
	if !strings.HasPrefix(firstExpected, "ev turn_end") {
		t.Errorf("first divergence, expected side: %q, want the turn_end", firstExpected)
	}
	if strings.Contains(firstActual, "turn_end") {
		t.Errorf("first divergence, actual side: %q shows a turn_end the faulty loop never emits", firstActual)
	}
	marked := 0
	for _, f := range run.Findings {
		if f.Entry != 0 {
			marked++
		}
	}
	if len(shownRules) != marked || findRows == 0 {
		t.Errorf("%d findings shown on %d rows (%q), want the %d findings that point at an entry", len(shownRules), findRows, shownRules, marked)
	}
	if stops == "0" || stops == "" {
		t.Errorf("next/previous finds %s stops", stops)
	}

	screenshot(t, ctx, "run.png")

	// Scrolled to the last row, the lane names are still at the top of the window (a
	// scrolling wrapper held them, and they went with the rows).
	top := eval[float64](t, ctx, `(window.scrollTo(0, document.body.scrollHeight), document.querySelector("tr.lanes th.ln").getBoundingClientRect().top)`)
	if top < 0 || top > 60 {
		t.Errorf("scrolled to the end, the lane names are at %.0f px from the top of the window", top)
	}
	eval[bool](t, ctx, `(window.scrollTo(0, 0), true)`)

	// Clicking an entry opens its JSON inline and in the panel. (Centred first: the panel
	// covers the bottom of the window.)
	eval[bool](t, ctx, `(document.querySelector("tr.first td.txt[data-seq] summary").scrollIntoView({block: "center"}), true)`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr.first td.txt[data-seq] summary`))); err != nil {
		t.Fatal(err)
	}
	inline := eval[string](t, ctx, `document.querySelector("tr.first td.txt[data-seq] details[open] pre").innerText`)
	panel := eval[string](t, ctx, `document.querySelector("#panel pre").innerText`)
	if !strings.Contains(inline, `"seq":`) || !strings.Contains(inline, `"kind":`) {
		t.Errorf("the opened entry shows %q, want its JSON", inline)
	}
	if panel != inline {
		t.Errorf("the panel shows %q, want the clicked entry's JSON %q", panel, inline)
	}
	// The panel closes, stays closed while the pointer passes over entries, and a click
	// opens it again.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#panel .close`))); err != nil {
		t.Fatal(err)
	}
	hovered := eval[bool](t, ctx, `(document.querySelector("td.txt[data-seq]").dispatchEvent(new MouseEvent("mouseover", {bubbles: true})), document.getElementById("panel").classList.contains("on"))`)
	if hovered {
		t.Error("closed, the panel opened again on hover")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr.first td.txt[data-seq] summary`))); err != nil {
		t.Fatal(err)
	}
	if !eval[bool](t, ctx, `document.getElementById("panel").classList.contains("on")`) {
		t.Error("a click did not open the closed panel")
	}
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// The report of a conformance run against an implementation with two defects: the index
// shows each cause once, with the scenarios it explains; every failing scenario has a page;
// a scenario that lost its tool updates shows that divergence in its lanes.
func TestBrowserConformanceReport(t *testing.T) {
	chromium(t)
	c := faultyConformance(t, "tools-sequential", "prepare-hooks")
	rep := c.Report
	if rep.Failed == 0 || len(rep.Causes) < 2 {
		t.Fatalf("%d failed, %d causes: the faulty implementation must fail with both defects", rep.Failed, len(rep.Causes))
	}
	dir := t.TempDir()
	if err := WriteConformance(dir, c); err != nil {
		t.Fatal(err)
	}
	ctx := browserPage(t, filepath.Join(dir, "index.html"))
	titles := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("table.causes tr.cause td.title")).map(td => td.innerText.trim())`)
	summary := eval[string](t, ctx, `document.getElementById("summary").innerText`)
	links := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("table.failing a")).map(a => a.getAttribute("href"))`)
	explained := eval[int](t, ctx, `document.querySelectorAll("table.causes a").length`)
	screenshot(t, ctx, "conform-index.png")

	if len(titles) != len(rep.Causes) {
		t.Errorf("the index shows %d causes, the run has %d", len(titles), len(rep.Causes))
	}
	seen := map[string]bool{}
	for i, title := range titles {
		if seen[title] {
			t.Errorf("cause %q shown twice", title)
		}
		seen[title] = true
		if i < len(rep.Causes) && title != rep.Causes[i].Title {
			t.Errorf("cause %d shown as %q, want %q", i+1, title, rep.Causes[i].Title)
		}
	}
	if summary != rep.Summary() {
		t.Errorf("summary %q, want %q", summary, rep.Summary())
	}
	if len(links) != rep.Failed || explained != rep.Failed {
		t.Errorf("%d failing-scenario links and %d explained, want %d each", len(links), explained, rep.Failed)
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(dir, l)); err != nil {
			t.Errorf("link %s: %v", l, err)
		}
	}

	// A scenario whose tool reports progress: the reference's tool_execution_update has no
	// counterpart in the implementation's trace.
	page := filepath.Join(dir, PageName("tools-sequential/updates"))
	ctx = browserPage(t, page)
	firstExpected := eval[string](t, ctx, `document.querySelectorAll("tr.first td.txt")[0].innerText.trim()`)
	firstActualEmpty := eval[bool](t, ctx, `document.querySelectorAll("tr.first td.txt")[1].classList.contains("none")`)
	toolLane := eval[bool](t, ctx, `Array.from(document.querySelectorAll("tr.lanes th.ln")).some(th => th.innerText.startsWith("tool "))`)
	marked := eval[int](t, ctx, `document.querySelectorAll("tr.find").length`)
	if !strings.HasPrefix(firstExpected, "ev tool_execution_update") || !firstActualEmpty {
		t.Errorf("first divergence: expected side %q, actual side empty %v; want the reference's tool_execution_update against nothing", firstExpected, firstActualEmpty)
	}
	if !toolLane {
		t.Error("no tool-call lane")
	}
	if marked == 0 {
		t.Error("no finding marked on a row")
	}
	screenshot(t, ctx, "conform-scenario.png")
}
