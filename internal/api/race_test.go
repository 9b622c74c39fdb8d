//go:build race

package api_test

// underRace: the race detector slows the store's writes about tenfold, so
// the volume scenarios (TestAutogiroRoundTrip) run smaller under it; the
// PostgreSQL pass, without it, runs them at full size.
const underRace = true
