package conformance

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReadJSON reads a report WriteJSON wrote. What the JSON does not hold is left zero: whether
// each result's invariants were checked (the tallies by invariant are read as written) and
// the pi the reference behaved as.
func ReadJSON(r io.Reader) (Report, error) {
	var in jsonReport
	dec := json.NewDecoder(r)
	if err := dec.Decode(&in); err != nil {
		return Report{}, fmt.Errorf("not a conform JSON report: %w", err)
	}
	if in.Results == nil {
		return Report{}, errors.New("not a conform JSON report: no results")
	}
	rep := Report{Implementation: in.Implementation, Profile: in.Profile, Passed: in.Passed, Failed: in.Failed, Skipped: in.Skipped,
		ExpectedFailures: in.ExpectedFailures, Duration: time.Duration(in.DurationMs) * time.Millisecond, StartError: in.StartError,
		DeliveriesAhead: in.DeliveriesAhead, StandingAnswers: in.StandingAnswers, Recheck: in.Recheck, Symptoms: in.Symptoms,
		KnownCauses: in.KnownCauses, Families: in.Families, Invariants: in.Invariants}
	for _, c := range in.Causes {
		rep.Causes = append(rep.Causes, c.Cause)
	}
	for _, res := range in.Results {
		rep.Results = append(rep.Results, Result{Scenario: res.Scenario, Family: res.Family, Status: res.Status, Reason: res.Reason,
			Error: res.Error, Findings: res.Findings, Flaky: res.Flaky, Duration: time.Duration(res.DurationMs) * time.Millisecond})
	}
	return rep, nil
}

// Merge combines the reports of shards of one suite, run against one implementation under
// one profile (names name them, for errors): the results are put together in the reports'
// order (a scenario in two reports is an error), the totals and the time summed, the tallies
// by family and invariant summed, and the causes found again over every failure.
func Merge(reports []Report, names []string) (Report, error) {
	if len(reports) == 0 {
		return Report{}, errors.New("nothing to merge")
	}
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return "report " + strconv.Itoa(i+1)
	}
	out := Report{Implementation: reports[0].Implementation, Profile: reports[0].Profile, HeldTo: reports[0].HeldTo}
	from := map[string]int{}
	fams := map[string]*Tally{}
	var invs []Tally
	var starts []string
	for i, r := range reports {
		switch {
		case r.Implementation != out.Implementation:
			return Report{}, fmt.Errorf("%s is a report on %s, %s on %s: merge reports of one implementation", name(i), r.Implementation, name(0), out.Implementation)
		case r.Profile != out.Profile:
			return Report{}, fmt.Errorf("%s compared under profile %s, %s under %s: merge reports of one profile", name(i), r.Profile, name(0), out.Profile)
		}
		for _, res := range r.Results {
			if j, ok := from[res.Scenario]; ok {
				return Report{}, fmt.Errorf("scenario %s is in %s and in %s: the shards overlap", res.Scenario, name(j), name(i))
			}
			from[res.Scenario] = i
			out.Results = append(out.Results, res)
		}
		out.Passed += r.Passed
		out.Failed += r.Failed
		out.Skipped += r.Skipped
		out.ExpectedFailures += r.ExpectedFailures
		out.Duration += r.Duration
		out.DeliveriesAhead = out.DeliveriesAhead || r.DeliveriesAhead
		out.StandingAnswers = out.StandingAnswers || r.StandingAnswers
		if r.StartError != "" && !slices.Contains(starts, r.StartError) {
			starts = append(starts, r.StartError)
		}
		if rc := r.Recheck; rc != nil {
			if out.Recheck == nil {
				out.Recheck = &Recheck{}
			}
			out.Recheck.Checked = append(out.Recheck.Checked, rc.Checked...)
			out.Recheck.Passed = append(out.Recheck.Passed, rc.Passed...)
			out.Recheck.Untried += rc.Untried
		}
		for _, t := range r.Families {
			if fams[t.Name] == nil {
				fams[t.Name] = &Tally{Name: t.Name}
			}
			add(fams[t.Name], t)
		}
		for _, t := range r.Invariants {
			k := slices.IndexFunc(invs, func(x Tally) bool { return x.Name == t.Name })
			if k < 0 {
				invs = append(invs, Tally{Name: t.Name})
				k = len(invs) - 1
			}
			add(&invs[k], t)
		}
	}
	out.StartError = strings.Join(starts, "; ")
	for _, n := range slices.Sorted(maps.Keys(fams)) {
		out.Families = append(out.Families, *fams[n])
	}
	out.Invariants = invs
	out.diagnose(nil)
	return out, nil
}

func add(t *Tally, u Tally) {
	t.Passed += u.Passed
	t.Failed += u.Failed
	t.Skipped += u.Skipped
}

// MergeJUnit merges JUnit XML documents (as WriteJUnit writes them; names name them, for
// errors) into one, written to w: the test suites of one name become one, their testcases put
// together (a testcase in two documents is an error: the shards overlap) and their counts and
// times summed; the skipped and expected-failures properties are summed, and the causes
// listed once each. It returns the number of failing testcases.
func MergeJUnit(w io.Writer, docs [][]byte, names []string) (failures int, err error) {
	var merged junitSuites
	at := map[string]int{}
	seen := map[string]string{}
	for i, data := range docs {
		var doc junitSuites
		if err := xml.Unmarshal(data, &doc); err != nil {
			return 0, fmt.Errorf("%s: not a JUnit XML report of turnstile conform: %w", nameOf(names, i), err)
		}
		if merged.Name == "" {
			merged.Name = doc.Name
		}
		for _, s := range doc.Suites {
			k, ok := at[s.Name]
			if !ok {
				at[s.Name] = len(merged.Suites)
				merged.Suites = append(merged.Suites, junitSuite{Name: s.Name, Time: seconds(0), Properties: s.Properties})
				k = len(merged.Suites) - 1
			} else {
				mergeProperties(&merged.Suites[k], s.Properties)
			}
			m := &merged.Suites[k]
			for _, c := range s.Cases {
				key := s.Name + "\x00" + c.Classname + "\x00" + c.Name
				if prev, ok := seen[key]; ok {
					return 0, fmt.Errorf("testcase %s is in %s and in %s: the shards overlap", c.Name, prev, nameOf(names, i))
				}
				seen[key] = nameOf(names, i)
				m.Cases = append(m.Cases, c)
			}
			m.Tests += s.Tests
			m.Failures += s.Failures
			m.Errors += s.Errors
			m.Skipped += s.Skipped
			m.Time = seconds(parseSeconds(m.Time) + parseSeconds(s.Time))
		}
	}
	merged.Tests, merged.Failures, merged.Skipped = 0, 0, 0
	total := 0.0
	for _, s := range merged.Suites {
		merged.Tests += s.Tests
		merged.Failures += s.Failures
		merged.Skipped += s.Skipped
		total += parseSeconds(s.Time)
		failures += s.Failures + s.Errors
	}
	merged.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return 0, err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(merged); err != nil {
		return 0, fmt.Errorf("junit: %w", err)
	}
	_, err = io.WriteString(w, "\n")
	return failures, err
}

// mergeProperties adds a later shard's properties to a suite's: counts summed, causes listed
// once each (a cause of one title and rule in several shards, its scenarios summed), the rest
// kept from the first shard.
func mergeProperties(s *junitSuite, props []junitProperty) {
	type cause struct {
		title, rule string
		scenarios   int
	}
	var causes []cause
	addCause := func(v string) {
		// As WriteJUnit writes them: "title — N scenarios — rule: R".
		parts := strings.Split(v, " — ")
		c := cause{title: v}
		if len(parts) == 3 {
			n, err := strconv.Atoi(strings.TrimSuffix(parts[1], " scenarios"))
			if err == nil {
				c = cause{title: parts[0], rule: parts[2], scenarios: n}
			}
		}
		for k := range causes {
			if causes[k].title == c.title && causes[k].rule == c.rule {
				causes[k].scenarios += c.scenarios
				return
			}
		}
		causes = append(causes, c)
	}
	for _, p := range s.Properties {
		if strings.HasPrefix(p.Name, "cause.") {
			addCause(p.Value)
		}
	}
	for _, p := range props {
		switch {
		case p.Name == "skipped" || p.Name == "expected-failures":
			for k := range s.Properties {
				if s.Properties[k].Name == p.Name {
					a, _ := strconv.Atoi(s.Properties[k].Value)
					b, _ := strconv.Atoi(p.Value)
					s.Properties[k].Value = strconv.Itoa(a + b)
				}
			}
		case strings.HasPrefix(p.Name, "cause."):
			addCause(p.Value)
		}
	}
	kept := slices.DeleteFunc(s.Properties, func(p junitProperty) bool { return strings.HasPrefix(p.Name, "cause.") })
	for k := range kept {
		if kept[k].Name == "causes" {
			kept[k].Value = strconv.Itoa(len(causes))
		}
	}
	for i, c := range causes {
		v := c.title
		if c.rule != "" {
			v = fmt.Sprintf("%s — %d scenarios — %s", c.title, c.scenarios, c.rule)
		}
		kept = append(kept, junitProperty{Name: fmt.Sprintf("cause.%d", i+1), Value: v})
	}
	s.Properties = kept
}

func nameOf(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return "document " + strconv.Itoa(i+1)
}

func parseSeconds(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
