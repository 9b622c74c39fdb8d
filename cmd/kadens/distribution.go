package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kadens/kadens/internal/atomicfile"
	"github.com/kadens/kadens/internal/delivery"
)

// distributionExport runs `kadens distribution export --tenant T --date D
// [--carrier C] [--view list|delta|counts] [--format csv|jsonl] [--out
// FILE]` (docs/PRINT.md, "The distribution list"): the same file as GET
// /distribution/{date}, streamed to stdout or written whole or not at all
// to FILE, with a summary line on stderr.
func distributionExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("distribution export", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	date := fs.String("date", "", "the publishing day (YYYY-MM-DD)")
	carrier := fs.String("carrier", "", "only this carrier's copies (default all; --carrier= for copies without one)")
	view := fs.String("view", delivery.ViewList, "list, delta or counts")
	format := fs.String("format", delivery.FormatCSV, "csv or jsonl")
	outFile := fs.String("out", "", "the file to write (default stdout)")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *date == "" {
		return usagef("--date is required")
	}
	req, f, err := delivery.ParseDistribution(*date, *view, *format)
	if err != nil {
		return usagef("%v", err)
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "carrier" {
			req.Carrier = carrier
		}
	})
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	tctx, err := tenantContext(ctx, st, *tenant)
	if err != nil {
		return err
	}
	d, err := delivery.LoadDistribution(tctx, st, req.Day)
	if err != nil {
		return err
	}
	var sum delivery.DistributionSummary
	write := func(w io.Writer) error {
		enc, err := delivery.NewEncoder(w, f)
		if err != nil {
			return err
		}
		sum, err = d.Write(tctx, st, req, enc)
		return err
	}
	if *outFile == "" {
		err = write(stdout)
	} else {
		err = atomicfile.Write(*outFile, 0o644, write)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "distribution %s %s: %d lines, %d copies\n", req.Day, req.View, sum.Lines, sum.Copies)
	return nil
}

// distributionPublish runs `kadens distribution publish --tenant T --date
// D [--json]`: the day's list published (DistributionListAvailable), for a
// timer at the print deadline.
func distributionPublish(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("distribution publish", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	date := fs.String("date", "", "the publishing day (YYYY-MM-DD)")
	asJSON := fs.Bool("json", false, "print the publication as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	day, err := delivery.ParseDate(*date)
	if err != nil {
		return usagef("--date: %v", err)
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	tctx, err := tenantContext(ctx, st, *tenant)
	if err != nil {
		return err
	}
	p, err := delivery.PublishDistribution(tctx, st, day, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, p)
	}
	fmt.Fprintf(stdout, "distribution %s published (revision %d): %d copies\n", p.Date, p.Revision, p.Copies)
	return nil
}
