// Package diagnose turns a failed conformance run into findings a port author can act on,
// and groups the findings of a whole suite into causes.
//
// For one scenario, Diagnose takes the reference's trace, the implementation's trace, the
// scenario's expectations and the invariants, and returns every Finding:
//
//   - divergence: the two traces are aligned (an edit script over their entries, keyed by
//     kind, name and message role), and each region of missing, extra or replaced entries,
//     and each field that differs in a matched pair of entries, is one finding;
//   - invariant: a named invariant (package invariant) the implementation's trace breaks;
//   - expectation: a line of the scenario's own expect: block the implementation's trace
//     does not meet;
//   - error: the implementation failed (timeout, crash, protocol error).
//
// Every finding names the Rule it breaks (the invariant's rule, or the scenario's rule: its
// rule ids when it lists them, else its "# Rule:" sentence), says in a sentence what is
// wrong (Says), carries the full expected and actual values (never cut), and the positions
// of the entries in both traces. Findings that come after the first divergence are marked
// Consequence: they may follow from it rather than be separate faults.
//
// Each finding has a Signature: what differs, where and in which shape, never the
// scenario's values ("event message_end assistant: data.message.thinkingLevel absent",
// "missing call stream", "call tool instead of event tool_execution_end", "invariant
// truncation", or "invariant results: R-EXEC-PARALLEL" when the violation names the rule of
// its invariant it breaks; an unmet expectation is its scenario's own). Its Shape is coarser — the
// field and how it differs, whatever the entry ("thinkingLevel absent") — for display.
//
// Group collects the diagnoses of a suite and picks causes greedily: the signature that is
// a root finding (not after the first divergence) in the most failing scenarios not yet
// explained, until every failing scenario is explained — so that one defect met by 130
// scenarios is one cause of 130 scenarios, and three independent defects are three causes.
// Ties go to invariants, which name their rule. Causes are ranked by the number of
// scenarios they touch. Symptoms lists what only shows after first divergences and no cause
// names: consequences, or a second defect hidden behind the first.
package diagnose
