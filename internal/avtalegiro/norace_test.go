//go:build !race

package avtalegiro_test

const underRace = false
