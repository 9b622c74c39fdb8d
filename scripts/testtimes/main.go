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
// "Test suite" section has it.
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
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *nPkgs, *nTests, *nSubs, *markdown); err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, nPkgs, nTests, nSubs int, markdown bool) error {
	var pkgs, tests, subs []result
	failed := map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test's own lines (build errors) between the events
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("decode %q: %w", line, err)
		}
		if ev.Action != "pass" && ev.Action != "fail" && ev.Action != "skip" {
			continue
		}
		r := result{pkg: ev.Package, test: ev.Test, secs: ev.Elapsed, action: ev.Action}
		switch {
		case ev.Test == "":
			pkgs = append(pkgs, r)
			if ev.Action == "fail" {
				failed[ev.Package] = true
			}
		case strings.Contains(ev.Test, "/"):
			subs = append(subs, r)
		default:
			tests = append(tests, r)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read: %w", err)
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
		fmt.Fprintln(out, "| package | s | |")
		fmt.Fprintln(out, "|---|---:|---|")
		for _, p := range head(pkgs, nPkgs) {
			fmt.Fprintf(out, "| `%s` | %.1f | %s |\n", short(p.pkg), p.secs, p.action)
		}
		fmt.Fprintf(out, "| all %d packages (sum; they run 2 at a time on 2 cores) | %.1f | |\n", len(pkgs), total)
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
