package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenantimport"
)

// tenantImport runs `kadens import --tenant T [--dry-run] FILE`: a
// tenant's subscribers, payment agreements and running subscriptions from
// another system (docs/MIGRATION.md, "kadens import").
func tenantImport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("import", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant to import into (name or id)")
	dry := fs.Bool("dry-run", false, "check every row and report what would be created, updated or left; change nothing")
	format := fs.String("format", "", "csv or jsonl (default: by the file's extension: .csv, .jsonl/.ndjson/.json)")
	batch := fs.Int("batch", 200, "subscribers written per transaction")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if err := parseFlags(fs, cfg, nil); err != nil {
		return err
	}
	f := tenantimport.Format(*format)
	switch {
	case *format == "":
		var ok bool
		if f, ok = tenantimport.FormatOf(file); !ok {
			return usagef("%s: say --format csv or --format jsonl (the extension does not tell)", file)
		}
	case f != tenantimport.CSV && f != tenantimport.JSONLines:
		return usagef("--format %q: want csv or jsonl", *format)
	}
	if *batch < 1 {
		return usagef("--batch must be at least 1")
	}
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	tctx, now, err := tenantAt(ctx, st, *tenant)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	// The importer writes no renewal and calls no billing hook: the engine
	// here only reads the catalog and writes the imported periods.
	eng := engine.New(st, log, "kadens-import/"+store.NewID())
	last := time.Now()
	rep, err := tenantimport.Run(tctx, st, eng, in, tenantimport.Options{File: file, Format: f, DryRun: *dry, Batch: *batch, Now: now,
		Progress: func(p tenantimport.Progress) {
			if time.Since(last) < 2*time.Second && p.Subscribers < p.Total {
				return
			}
			last = time.Now()
			fmt.Fprintf(stderr, "%d/%d subscribers, %.0f rows/s\n", p.Subscribers, p.Total, float64(p.Subscribers)/p.Elapsed.Seconds())
		}})
	if *asJSON && (err == nil || errors.Is(err, tenantimport.ErrProblems)) {
		if perr := printJSON(stdout, rep); perr != nil {
			return perr
		}
		return err
	}
	if err != nil && !errors.Is(err, tenantimport.ErrProblems) {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		return fmt.Errorf("%s: %d problems; nothing of their batch was written (fix the rows and run again)", file, len(rep.Problems))
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	verb := "imported"
	if rep.DryRun {
		verb = "dry run (nothing changed); would import"
	}
	c := func(x tenantimport.Counts) string {
		return fmt.Sprintf("%d created, %d updated, %d unchanged, %d skipped", x.Created, x.Updated, x.Unchanged, x.Skipped)
	}
	fmt.Fprintf(stdout, "%s: %s in %s\n  subscribers: %s\n  payment agreements: %s\n  subscriptions: %s\n",
		file, verb, rep.Elapsed, c(rep.Subscribers), c(rep.Agreements), c(rep.Subscriptions))
	return nil
}
