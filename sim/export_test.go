package sim

// RunInFull is Run with every entry written in full: the trace the linear form stands for.
func RunInFull(sc *Scenario, impl Implementation) (*Trace, error) { return run(sc, impl, true) }
