// Package retries reads retry schedules: the delays after each failed
// attempt, written as a list such as 10s,30s,1h*22. It stands apart from
// the webhook dispatcher that uses it so that the settings
// (internal/config) can check a schedule without linking the dispatcher.
package retries

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Default is the schedule of webhook deliveries and outbox consumers
// unless configured otherwise, of product-decisions §6: the delays
// after the first, second, … failed attempt. 10 s, 30 s, 1 min, 5 min,
// 10 min, 30 min, 1 h, then hourly until 24 h have passed since the first
// attempt; then the delivery is Failed.
const Default = "10s,30s,1m,5m,10m,30m,1h,1h*22"

// Parse reads a comma-separated list of delays; d*n repeats a
// delay n times. An empty list means no retries.
func Parse(s string) ([]time.Duration, error) {
	out := []time.Duration{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n := 1
		if d, rep, ok := strings.Cut(part, "*"); ok {
			var err error
			if n, err = strconv.Atoi(rep); err != nil || n < 1 || n > 1000 {
				return nil, fmt.Errorf("retry schedule: %q: want delay*count with a count from 1 to 1000", part)
			}
			part = d
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("retry schedule: %q is not a positive duration such as 10s or 1h", part)
		}
		for range n {
			out = append(out, d)
		}
	}
	return out, nil
}
