package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMarkdownTable: the package table names each package once, slowest
// first, with its SQLite and PostgreSQL times, a skip as "no tests", a
// failure marked, and sums of both passes.
func TestMarkdownTable(t *testing.T) {
	sqlite := `{"Action":"run","Package":"github.com/kadens/kadens/internal/a","Test":"TestX"}
{"Action":"pass","Package":"github.com/kadens/kadens/internal/a","Test":"TestX","Elapsed":1.5}
{"Action":"pass","Package":"github.com/kadens/kadens/internal/a","Elapsed":2.5}
go: some build line
{"Action":"fail","Package":"github.com/kadens/kadens/internal/b","Elapsed":7}
{"Action":"skip","Package":"github.com/kadens/kadens/internal/c","Elapsed":0}
`
	pgEvents := `{"Action":"pass","Package":"github.com/kadens/kadens/internal/a","Elapsed":4}
{"Action":"pass","Package":"github.com/kadens/kadens/internal/b","Elapsed":1}
`
	pgPkgs, _, _, err := read(strings.NewReader(pgEvents))
	if err != nil {
		t.Fatal(err)
	}
	pg := map[string]result{}
	for _, p := range pgPkgs {
		pg[p.pkg] = p
	}
	var out bytes.Buffer
	if err := run(strings.NewReader(sqlite), &out, 0, 0, 0, true, pg); err != nil {
		t.Fatal(err)
	}
	want := "| package | SQLite (-race) | PostgreSQL |\n|---|---:|---:|\n" +
		"| `internal/b` | 7.0 s FAILED | 1.0 s |\n" +
		"| `internal/a` | 2.5 s | 4.0 s |\n" +
		"| `internal/c` | no tests |  |\n" +
		"| all 3 packages (sum; they run 2 at a time on 2 cores) | 9.5 s | 5.0 s |\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
