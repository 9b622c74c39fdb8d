package store

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCachedTablesBumpVersion: list rows are served from a rowcache.Cache
// while their version is unchanged, so an UPDATE of a cached table
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
