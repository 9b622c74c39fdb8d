//go:build race

package tenantimport_test

// underRace: the race detector slows the import about tenfold, so the
// test moves fewer subscribers under it (see importSize).
const underRace = true
