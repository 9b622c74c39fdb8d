package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kadens/kadens/internal/atomicfile"
	"github.com/kadens/kadens/internal/bookkeeping"
)

// booksCommand runs the `kadens books` commands (docs/BOOKKEEPING.md):
// chart (install the example chart of a country, or a chart from a JSON
// file), recognize (move earned deferred revenue to revenue through a
// date), reconcile (ledger against documents; non-zero exit unless zero)
// and csv (the journal, one line per posting).
func booksCommand(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("books "+cmd, stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	org := fs.String("org", "", "the organization's id")
	example := fs.String("example", "", "chart: install the example chart of this country (NO or SE)")
	file := fs.String("file", "", "chart: install the chart in this JSON file")
	through := fs.String("through", "", "recognize: the last day to recognise (YYYY-MM-DD)")
	from := fs.String("from", "", "csv: the first accounting date (YYYY-MM-DD)")
	to := fs.String("to", "", "csv: the last accounting date (YYYY-MM-DD)")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *org == "" {
		return usagef("--org is required")
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
	now := time.Now()
	switch cmd {
	case "chart":
		var c bookkeeping.Chart
		switch {
		case *example != "" && *file == "":
			var ok bool
			if c, ok = bookkeeping.Example(*example); !ok {
				return usagef("--example: no example chart for %q (NO or SE)", *example)
			}
		case *file != "" && *example == "":
			raw, err := os.ReadFile(*file)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				return fmt.Errorf("%s: %w", *file, err)
			}
		default:
			return usagef("give one of --example and --file")
		}
		if err := bookkeeping.SetChart(tctx, st, *org, c, now); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "chart of %d accounts installed for organization %s\n", len(c.Accounts), *org)
		return nil
	case "recognize":
		if *through == "" {
			return usagef("--through is required")
		}
		moved, err := bookkeeping.Recognize(tctx, st, *org, *through, now)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "recognised %d (minor units) through %s\n", moved, *through)
		return nil
	case "reconcile":
		r, err := bookkeeping.Reconcile(tctx, st, *org)
		if err != nil {
			return err
		}
		if err := printJSON(stdout, r); err != nil {
			return err
		}
		if r.Differences() != 0 {
			return fmt.Errorf("ledger and documents differ by %d", r.Differences())
		}
		return nil
	case "csv":
		return bookkeeping.WriteCSV(tctx, st, *org, *from, *to, stdout)
	}
	return usagef("unknown command books %s", cmd)
}

// saftExport runs `kadens saft export --tenant T --org ID --from D --to D
// [--dir DIR]`: the organization's SAF-T Financial file for the period,
// written whole or not at all under the Norwegian file name.
func saftExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("saft export", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	org := fs.String("org", "", "the organization's id")
	from := fs.String("from", "", "the first accounting date (YYYY-MM-DD)")
	to := fs.String("to", "", "the last accounting date (YYYY-MM-DD)")
	dir := fs.String("dir", ".", "the directory to write the file in")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *org == "" || *from == "" || *to == "" {
		return usagef("--org, --from and --to are required")
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
	o, err := st.Organization(tctx, *org)
	if err != nil {
		return fmt.Errorf("organization %s: %w", *org, err)
	}
	now := time.Now().UTC()
	path := filepath.Join(*dir, bookkeeping.SAFTFileName(o.OrganizationNumber, now))
	var tot bookkeeping.SAFTTotals
	err = atomicfile.Write(path, 0o644, func(w io.Writer) error {
		var err error
		tot, err = bookkeeping.WriteSAFT(tctx, st, *org, *from, *to, now, w)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d entries, debit %d, credit %d (minor units)\n", path, tot.Entries, tot.Debit, tot.Credit)
	return nil
}

// booksSIE runs `kadens books sie --tenant T --org ID --from D --to D
// [--import] [--out FILE]`: the SIE 4E file of the financial year (4I with
// --import), to FILE (written whole or not at all) or stdout.
func booksSIE(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("books sie", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	org := fs.String("org", "", "the organization's id")
	from := fs.String("from", "", "the financial year's first day (YYYY-MM-DD)")
	to := fs.String("to", "", "the financial year's last day (YYYY-MM-DD)")
	imports := fs.Bool("import", false, "write SIE 4I (vouchers for import) instead of 4E")
	outFile := fs.String("out", "", "the file to write (default stdout)")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *org == "" || *from == "" || *to == "" {
		return usagef("--org, --from and --to are required")
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
	write := func(w io.Writer) error {
		_, err := bookkeeping.WriteSIE(tctx, st, *org, *from, *to, *imports, time.Now(), w)
		return err
	}
	if *outFile == "" {
		return write(stdout)
	}
	return atomicfile.Write(*outFile, 0o644, write)
}
