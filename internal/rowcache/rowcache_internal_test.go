package rowcache

import (
	"strconv"
	"strings"
	"testing"
)

func TestRowCache(t *testing.T) {
	c := New[string]()
	c.Put("t1", "a", 1, "one")
	if v, ok := c.Get("t1", "a", 1); !ok || *v != "one" {
		t.Fatalf("get at the cached version = %v, %v", v, ok)
	}
	if _, ok := c.Get("t1", "a", 2); ok {
		t.Fatal("a row at another version came from the cache")
	}
	if _, ok := c.Get("t2", "a", 1); ok {
		t.Fatal("another tenant's row came from the cache")
	}
	c.Put("t1", "a", 2, "two")
	if v, ok := c.Get("t1", "a", 2); !ok || *v != "two" {
		t.Fatalf("after a newer put: %v, %v", v, ok)
	}
	for i := range 3 * Size {
		c.Put("t1", strings.Repeat("x", i%7)+string(rune('a'+i%26))+strconv.Itoa(i), 0, "")
	}
	n := 0
	for i := range c.shards {
		n += len(c.shards[i].rows)
	}
	if n > Size {
		t.Fatalf("cache holds %d rows, bound %d", n, Size)
	}
}

// TestConcurrentUse: list pages of many connections share a cache; under
// -race this shows Get and Put need no lock of the caller's.
func TestConcurrentUse(t *testing.T) {
	c := New[int]()
	done := make(chan bool)
	for g := range 4 {
		go func() {
			defer func() { done <- true }()
			for i := range 2000 {
				id := strconv.Itoa(i % 300)
				c.Put("t", id, int64(g), i)
				if v, ok := c.Get("t", id, int64(g)); ok && *v < 0 {
					t.Errorf("row %s: %d", id, *v)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}
