// Package trace is the record of a simulated run and its vocabulary: the entries (events the
// loop emitted, calls it made into the world with their answers, deliveries the world
// released, user actions, the run's end and failures, Agent outcomes), their canonical JSON
// lines and the linear form that links what an earlier entry already holds (Link, Expand),
// reading them back (ReadJSONL), the text timeline people read and goldens hold (Timeline),
// and the comparison of two records.
package trace
