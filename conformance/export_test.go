package conformance

import (
	"time"
)

// SetServedStallLimit shortens how long ServePort waits for a step of a stuck port.
func SetServedStallLimit(d time.Duration) { servedStallLimit = d }
