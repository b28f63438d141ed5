package porttest

import (
	"time"
)

// SetServedStallLimit shortens how long Serve waits for a step of a stuck port.
func SetServedStallLimit(d time.Duration) { servedStallLimit = d }
