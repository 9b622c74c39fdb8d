package store

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCachedTablesBumpVersion: list rows are served from rowCache while
// their version is unchanged (rowcache.go), so an UPDATE of a cached table
// that leaves version alone would make lists show the old row. Every such
// statement in the store must bump it.
func TestCachedTablesBumpVersion(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	update := regexp.MustCompile("(?is)UPDATE\\s+(subscriptions|invoices)(\\s+(AS\\s+)?\\w+)?\\s+SET[^`]*")
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range update.FindAllString(string(src), -1) {
			found++
			if !regexp.MustCompile(`version\s*=\s*(\w+\.)?version\s*\+\s*1`).MatchString(stmt) {
				t.Errorf("%s: %q does not bump version: lists would serve the old row from their cache", f, firstLine(stmt))
			}
		}
	}
	if found < 6 {
		t.Fatalf("found %d UPDATE statements of cached tables; the scan no longer sees them", found)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func TestRowCache(t *testing.T) {
	c := newRowCache[string]()
	c.put("t1", "a", 1, "one")
	if v, ok := c.get("t1", "a", 1); !ok || *v != "one" {
		t.Fatalf("get at the cached version = %v, %v", v, ok)
	}
	if _, ok := c.get("t1", "a", 2); ok {
		t.Fatal("a row at another version came from the cache")
	}
	if _, ok := c.get("t2", "a", 1); ok {
		t.Fatal("another tenant's row came from the cache")
	}
	c.put("t1", "a", 2, "two")
	if v, ok := c.get("t1", "a", 2); !ok || *v != "two" {
		t.Fatalf("after a newer put: %v, %v", v, ok)
	}
	for i := range 3 * rowCacheSize {
		c.put("t1", strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i), 0, "")
	}
	n := 0
	for i := range c.shards {
		n += len(c.shards[i].rows)
	}
	if n > rowCacheSize {
		t.Fatalf("cache holds %d rows, bound %d", n, rowCacheSize)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
