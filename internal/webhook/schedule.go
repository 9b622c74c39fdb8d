package webhook

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultSchedule is the retry schedule of product-decisions §6: the delays
// after the first, second, … failed attempt. 10 s, 30 s, 1 min, 5 min,
// 10 min, 30 min, 1 h, then hourly until 24 h have passed since the first
// attempt; then the delivery is Failed.
const DefaultSchedule = "10s,30s,1m,5m,10m,30m,1h,1h*22"

// ParseSchedule reads a comma-separated list of delays; d*n repeats a
// delay n times. An empty list means no retries.
func ParseSchedule(s string) ([]time.Duration, error) {
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
