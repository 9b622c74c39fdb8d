package retries_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/retries"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{retries.Default, "", "1s", "1h*0", "-1s", "10s,,20s", "1m*3,5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := retries.Parse(s)
		if err != nil {
			return
		}
		for _, x := range d {
			if x <= 0 {
				t.Fatalf("%q: non-positive delay %s", s, x)
			}
		}
	})
}

func TestDefault(t *testing.T) {
	d, err := retries.Parse(retries.Default)
	if err != nil {
		t.Fatal(err)
	}
	first := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	if !slices.Equal(d[:7], first) {
		t.Fatalf("schedule starts %v", d[:7])
	}
	var total time.Duration
	for _, x := range d {
		total += x
	}
	for _, x := range d[7:] {
		if x != time.Hour {
			t.Fatalf("after the first hour, retries are hourly: %v", d)
		}
	}
	if total > 24*time.Hour || total+time.Hour <= 24*time.Hour {
		t.Fatalf("retries span %s, want the last within 24 h of the first attempt", total)
	}
	if _, err := retries.Parse("10s,soon"); err == nil {
		t.Fatal("bad schedule accepted")
	}
	if d, err := retries.Parse(""); err != nil || d == nil || len(d) != 0 {
		t.Fatalf("empty schedule: %v %v", d, err)
	}
}
