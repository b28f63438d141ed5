package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// JUnit XML, as CI systems read it: one testsuite for the implementation, one testcase per
// scenario, with a <failure> (the reason and every finding in full) or a <skipped> (an
// expected failure is a <skipped type="expected-failure"> with its findings; the suite's
// properties count skips and expected failures apart, and name the causes).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r Report) error {
	suite := junitSuite{
		Name:     "turnstile conformance: " + r.Implementation,
		Tests:    len(r.Results),
		Failures: r.Failed,
		Skipped:  r.Skipped + r.ExpectedFailures,
		Time:     seconds(r.Duration.Seconds()),
		Properties: []junitProperty{
			{Name: "implementation", Value: r.Implementation},
			{Name: "profile", Value: string(r.Profile)},
			{Name: "skipped", Value: fmt.Sprint(r.Skipped)},
			{Name: "expected-failures", Value: fmt.Sprint(r.ExpectedFailures)},
			{Name: "causes", Value: fmt.Sprint(len(r.Causes))},
			{Name: "causes-of-expected-failures", Value: fmt.Sprint(len(r.KnownCauses))},
		},
	}
	for i, c := range r.Causes {
		suite.Properties = append(suite.Properties, junitProperty{Name: fmt.Sprintf("cause.%d", i+1),
			Value: fmt.Sprintf("%s — %d scenarios — rule: %s", c.Title, len(c.Scenarios), c.Rule)})
	}
	for _, res := range r.Results {
		c := junitCase{Name: res.Scenario, Classname: "conformance." + string(r.Profile), Time: seconds(res.Duration.Seconds())}
		switch res.Status {
		case Fail:
			kind := "divergence"
			if res.Error != "" {
				kind = "error"
			}
			text := res.Reason + "\n"
			text += FindingsText(res.Findings, "", 0)
			c.Failure = &junitFailure{Message: firstLine(res.Reason), Type: kind, Text: text}
		case ExpectedFail:
			c.Skipped = &junitSkipped{Message: res.Reason, Type: "expected-failure", Text: FindingsText(res.Findings, "", 0)}
		case Skip:
			c.Skipped = &junitSkipped{Message: res.Reason}
		}
		suite.Cases = append(suite.Cases, c)
	}
	doc := junitSuites{Name: "turnstile conformance", Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
