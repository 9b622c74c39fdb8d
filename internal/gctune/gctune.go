// Package gctune sets the Go garbage collector for a Kadens server.
//
// Go's default (GOGC=100) starts a collection whenever the heap has grown
// by as much as was live after the last one, with a floor of 4 MiB. A
// Kadens process keeps little live heap (the SQLite page cache lives
// outside it and PostgreSQL keeps its own), but the engine allocates fast
// while it renews a batch, so by default it collected many times a second:
// on PostgreSQL half of the process's CPU per renewal was the collector
// and the scavenger returning the memory to the OS. Apply lets the heap
// grow to five times the live heap between collections, under a soft
// limit that makes the collector work harder, instead of the heap growing,
// as the process nears it.
//
// An operator's GOGC or GOMEMLIMIT wins: Apply changes nothing when either
// is set.
package gctune

import "runtime/debug"

const (
	// Percent is the GOGC Apply sets.
	Percent = 400
	// Limit is the soft memory limit Apply sets (bytes of memory the Go
	// runtime manages; SQLite's page cache is outside it).
	Limit = 512 << 20
)

// Apply sets Percent and Limit unless getenv has GOGC or GOMEMLIMIT, and
// reports whether it did.
func Apply(getenv func(string) string) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetGCPercent(Percent)
	debug.SetMemoryLimit(Limit)
	return true
}
