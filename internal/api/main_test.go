package api_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs more of the package's parallel tests at once than go
// test's default (GOMAXPROCS) under the race detector, unless -parallel is
// given. The tests mostly
// wait on loopback HTTP and on their databases, and parallel tests take
// their slots first come, first served: with two slots the billing
// simulation's runs, whose subtests ask last, waited behind every other
// test before starting their minutes of work, which made the package's
// time the sum of the two instead of the longer.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if underRace && !set {
		_ = flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	os.Exit(m.Run())
}
