package throttle

import (
	"strconv"
	"testing"
	"time"
)

// A flood of made-up client ids keeps at most MaxKeysByKind buckets, and
// the ones forgotten first are those that remember no failure any more.
func TestFailureBucketsStayBounded(t *testing.T) {
	t.Parallel()
	f := New(time.Second, 2, 100)
	now := time.Now()
	for i := range 1000 {
		f.Fail("kc_"+strconv.Itoa(i), now)
	}
	if n := len(f.buckets); n > 100 {
		t.Fatalf("%d buckets kept, want at most 100", n)
	}
	f = New(time.Second, 2, 10)
	for i := range 5 {
		f.Fail("old"+strconv.Itoa(i), now)
	}
	later := now.Add(time.Minute) // the old buckets are full again
	for i := range 6 {
		f.Fail("new"+strconv.Itoa(i), later)
	}
	for i := range 5 {
		if f.buckets["old"+strconv.Itoa(i)] != nil {
			t.Fatalf("old%d kept, though it remembers nothing", i)
		}
	}
	for i := range 6 {
		if f.Wait("new"+strconv.Itoa(i), later) != 0 || f.buckets["new"+strconv.Itoa(i)] == nil {
			t.Fatalf("new%d forgotten", i)
		}
	}
}

func TestAddressKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"127.0.0.1:5000":             "127.0.0.1",
		"[::ffff:10.0.0.1]:80":       "10.0.0.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":          "fe80::/64",
		"not an address":             "not an address",
	} {
		if got := AddressKey(in); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}
