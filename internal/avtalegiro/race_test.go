//go:build race

package avtalegiro_test

// underRace: the race detector slows the store's writes about tenfold,
// so TestMemoryFlatInFileSize compares smaller files under it; the
// PostgreSQL pass, without it, runs it at full size.
const underRace = true
