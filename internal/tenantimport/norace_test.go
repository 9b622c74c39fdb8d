//go:build !race

package tenantimport_test

const underRace = false
