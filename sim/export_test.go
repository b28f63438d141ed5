package sim

// RunInFull is Run with every entry written in full: the trace the linear form stands for.
func RunInFull(sc *Scenario, impl Implementation) (*Trace, error) { return run(sc, impl, true) }

// ExpandByDecoding is Expand restoring every link by decoding, never on the bytes.
func (t *Trace) ExpandByDecoding() (*Trace, error) { return t.expand(byDecoding) }

// ExpandOnBytes is Expand restoring every link on the bytes: an error where it cannot.
func (t *Trace) ExpandOnBytes() (*Trace, error) { return t.expand(onBytesOnly) }
