// Package substatus defines a subscription period's status, once, for
// every place that shows or filters on it: the Go rule the engine and the
// API use, and the SQL the store's list filter and the analytics API put
// in their queries. A status is not stored; it follows from the period's
// dates, its cancellation and the time asked about.
package substatus

import (
	"strings"
	"time"
)

// The statuses, in the order a period passes through them.
const (
	Pending   = "Pending"   // the period has not started
	Active    = "Active"    // the period is running
	Completed = "Completed" // the period ended (renewed, or stopped at its end)
	Cancelled = "Cancelled" // a cancellation has taken effect
)

// All are the statuses, for enums and validation.
var All = []string{Pending, Active, Completed, Cancelled}

// At is the status at now of a period [start, end) whose cancellation,
// if any, takes effect at cancelEffective: Cancelled from then on, else
// Pending before start, Active until end, Completed after.
func At(start, end time.Time, cancelEffective *time.Time, now time.Time) string {
	switch {
	case cancelEffective != nil && !now.Before(*cancelEffective):
		return Cancelled
	case now.Before(start):
		return Pending
	case now.Before(end):
		return Active
	}
	return Completed
}

// SQL is At as an SQL expression over the subscriptions columns of alias
// ("" for none) at now, an SQL expression of the same engine (a
// placeholder).
func SQL(alias, now string) string {
	return columns(alias, now).Replace(`CASE WHEN @cancel_effective_at IS NOT NULL AND @cancel_effective_at <= NOW THEN 'Cancelled'` +
		` WHEN @period_start > NOW THEN 'Pending' WHEN @period_end > NOW THEN 'Active' ELSE 'Completed' END`)
}

// Is is "SQL(alias, now) = status" written as range conditions on the
// period and cancellation columns, branch by branch, so that an index on
// (tenant_id, period_end) serves a filter on the status. Each is true or
// false, never null, so its NOT is the inequality. An unknown status is
// "" (callers validate first).
func Is(alias, status, now string) string {
	r := columns(alias, now)
	cancelled := `(@cancel_effective_at IS NOT NULL AND @cancel_effective_at <= NOW)`
	live := `(@cancel_effective_at IS NULL OR @cancel_effective_at > NOW)`
	switch status {
	case Cancelled:
		return r.Replace(cancelled)
	case Pending:
		return r.Replace(`(` + live + ` AND @period_start > NOW)`)
	case Active:
		return r.Replace(`(@period_end > NOW AND @period_start <= NOW AND ` + live + `)`)
	case Completed:
		return r.Replace(`(@period_end <= NOW AND @period_start <= NOW AND ` + live + `)`)
	}
	return ""
}

func columns(alias, now string) *strings.Replacer {
	if alias != "" {
		alias += "."
	}
	return strings.NewReplacer("@", alias, "NOW", now)
}
