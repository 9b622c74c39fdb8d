// Command testtimes reads `go test -json` output and prints the slowest
// packages and tests, so the suite's time can be watched as it grows:
//
//	go test -race -json ./... > /tmp/suite.json; go run ./scripts/testtimes < /tmp/suite.json
//	go test -race -json ./internal/api | go run ./scripts/testtimes -tests 40
//
// A package's time is go test's own (the package binary's wall time, from
// its final pass/fail event); a test's is its elapsed time, which for a
// parallel test includes time spent waiting beside its siblings. Top-level
// tests and subtests are listed apart: a parent's time covers its
// subtests'. -markdown prints the package table as docs/PERFORMANCE.md's
// "Test suite" section has it, with a PostgreSQL column read from the
// PostgreSQL pass's events when -postgres names them:
//
//	go run ./scripts/testtimes -markdown -packages 0 -postgres /tmp/pg.json < /tmp/suite.json
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type result struct {
	pkg, test string
	secs      float64
	action    string
}

func main() {
	nPkgs := flag.Int("packages", 25, "how many of the slowest packages to print (0: all)")
	nTests := flag.Int("tests", 25, "how many of the slowest top-level tests to print")
	nSubs := flag.Int("subtests", 15, "how many of the slowest subtests to print")
	markdown := flag.Bool("markdown", false, "print the package table as Markdown")
	postgres := flag.String("postgres", "", "with -markdown: the PostgreSQL pass's go test -json output, for the table's second column")
	flag.Parse()
	var pg map[string]result
	if *postgres != "" {
		f, err := os.Open(*postgres)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", err)
			os.Exit(1)
		}
		pkgs, _, _, err := read(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", *postgres+":", err)
			os.Exit(1)
		}
		pg = map[string]result{}
		for _, p := range pkgs {
			pg[p.pkg] = p
		}
	}
	if err := run(os.Stdin, os.Stdout, *nPkgs, *nTests, *nSubs, *markdown, pg); err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
}

// read collects the packages', top-level tests' and subtests' results.
func read(in io.Reader) (pkgs, tests, subs []result, err error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test's own lines (build errors) between the events
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, nil, nil, fmt.Errorf("decode %q: %w", line, err)
		}
		if ev.Action != "pass" && ev.Action != "fail" && ev.Action != "skip" {
			continue
		}
		r := result{pkg: ev.Package, test: ev.Test, secs: ev.Elapsed, action: ev.Action}
		switch {
		case ev.Test == "":
			pkgs = append(pkgs, r)
		case strings.Contains(ev.Test, "/"):
			subs = append(subs, r)
		default:
			tests = append(tests, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("read: %w", err)
	}
	return pkgs, tests, subs, nil
}

// run prints the report of the events in; pg, if not nil, holds the
// PostgreSQL pass's package results for the Markdown table.
func run(in io.Reader, out io.Writer, nPkgs, nTests, nSubs int, markdown bool, pg map[string]result) error {
	pkgs, tests, subs, err := read(in)
	if err != nil {
		return err
	}
	failed := map[string]bool{}
	for _, p := range pkgs {
		if p.action == "fail" {
			failed[p.pkg] = true
		}
	}
	bySecs := func(rs []result) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].secs > rs[j].secs })
	}
	bySecs(pkgs)
	bySecs(tests)
	bySecs(subs)
	var total float64
	for _, p := range pkgs {
		total += p.secs
	}
	if markdown {
		fmt.Fprintln(out, "| package | SQLite (-race) | PostgreSQL |")
		fmt.Fprintln(out, "|---|---:|---:|")
		var pgTotal float64
		for _, p := range pg {
			pgTotal += p.secs
		}
		for _, p := range head(pkgs, nPkgs) {
			fmt.Fprintf(out, "| `%s` | %s | %s |\n", short(p.pkg), cell(p, true), cell(pg[p.pkg], pg != nil))
		}
		pgSum := ""
		if pg != nil {
			pgSum = fmt.Sprintf("%.1f s", pgTotal)
		}
		fmt.Fprintf(out, "| all %d packages (sum; they run 2 at a time on 2 cores) | %.1f s | %s |\n", len(pkgs), total, pgSum)
		return nil
	}
	fmt.Fprintf(out, "%d packages, %.1f s summed (go test runs GOMAXPROCS packages at once)\n", len(pkgs), total)
	fmt.Fprintln(out, "\nslowest packages:")
	for _, p := range head(pkgs, nPkgs) {
		fmt.Fprintf(out, "%8.1fs  %-4s %s\n", p.secs, p.action, short(p.pkg))
	}
	fmt.Fprintln(out, "\nslowest tests:")
	for _, r := range head(tests, nTests) {
		fmt.Fprintf(out, "%8.1fs  %-4s %s %s\n", r.secs, r.action, short(r.pkg), r.test)
	}
	fmt.Fprintln(out, "\nslowest subtests:")
	for _, r := range head(subs, nSubs) {
		fmt.Fprintf(out, "%8.1fs  %-4s %s %s\n", r.secs, r.action, short(r.pkg), r.test)
	}
	if len(failed) > 0 {
		names := make([]string, 0, len(failed))
		for p := range failed {
			names = append(names, short(p))
		}
		sort.Strings(names)
		fmt.Fprintf(out, "\nFAILED: %s\n", strings.Join(names, " "))
	}
	return nil
}

// cell is a package's time in the table: its seconds, or what it did
// other than pass; blank where the pass did not run it.
func cell(r result, ran bool) string {
	switch {
	case !ran || r.action == "":
		return ""
	case r.action == "skip":
		return "no tests"
	case r.action == "fail":
		return fmt.Sprintf("%.1f s FAILED", r.secs)
	}
	return fmt.Sprintf("%.1f s", r.secs)
}

func head(rs []result, n int) []result {
	if n > 0 && n < len(rs) {
		return rs[:n]
	}
	return rs
}

// short drops the module path, leaving what `go test ./...` prints.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/kadens/kadens/")
}
