//go:build !race

package api_test

const underRace = false
