package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kadens/kadens/internal/autogiro"
)

// The operator commands of Autogiro (docs/AUTOGIRO.md): the same export
// and import as the API's, for files moved by hand or by a script.

// autogiroExport runs `kadens autogiro export --tenant T --organization ID -o FILE`.
func autogiroExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("autogiro export", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	org := fs.String("organization", "", "the organization whose pending mandates and payments to export (id)")
	out := fs.String("o", "", "the file to write (default: Bankgirot's dataset name in the current directory)")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *org == "" {
		return usagef("--organization is required")
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
	now, err := tenantTime(tctx, st)
	if err != nil {
		return err
	}
	dir := "."
	if *out != "" {
		dir = filepath.Dir(*out)
	}
	if err := checkWritable(dir); err != nil {
		return err
	}
	f, err := autogiro.Export(tctx, st, *org, now, func(n int) { fmt.Fprintf(stderr, "%d records written\n", n) })
	if err != nil {
		return err
	}
	name := *out
	if name == "" {
		name = f.FileName
	}
	// From here on the items are marked sent: the file in the database
	// is what holds them (see exportfile.go).
	fmt.Fprintf(stderr, "stored as file %s; writing %s\n", f.ID, name)
	if _, err := writeStored(name, pauser(getenv, stderr), func(w io.Writer) error {
		return autogiro.CopyExportFile(tctx, st, f.ID, w)
	}); err != nil {
		return storedFileError(err, "submission file", f.ID, fmt.Sprintf("kadens autogiro fetch --tenant %s --file %s -o %s", *tenant, f.ID, name))
	}
	c := f.Counts
	fmt.Fprintf(stdout, "%s: file %s, %d bytes: %d new mandates, %d mandate cancellations, %d debits (%s SEK), %d refunds (%s SEK), %d payment cancellations\n",
		name, f.ID, f.Size, c.NewMandates, c.MandateCancellations, c.Debits, kronor(f.DebitTotal), c.Refunds, kronor(f.RefundTotal), c.PaymentCancellations)
	return nil
}

func kronor(ore int64) string { return fmt.Sprintf("%d.%02d", ore/100, ore%100) }

// autogiroImport runs `kadens autogiro import --tenant T FILE`.
func autogiroImport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("autogiro import", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if err := parseFlags(fs, cfg, nil); err != nil {
		return err
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
	now, err := tenantTime(tctx, st)
	if err != nil {
		return err
	}
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	res, err := autogiro.Import(tctx, st, in, now)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if *asJSON {
		return printJSON(stdout, res)
	}
	if res.AlreadyImported {
		fmt.Fprintf(stdout, "%s: imported before (%s); nothing changed\n", file, res.ImportID)
		return nil
	}
	fmt.Fprintf(stdout, "%s: %s, %d records: mandates %d active, %d rejected, %d cancelled, %d confirmed, %d requested; payments %d completed, %d failed, %d retrying, %d cancelled; %d unchanged\n",
		file, res.Kind, res.Records, res.MandatesActivated, res.MandatesRejected, res.MandatesCancelled, res.MandatesConfirmed,
		res.MandatesRequested, res.PaymentsCompleted, res.PaymentsFailed, res.PaymentsRetrying, res.PaymentsCancelled, res.Unchanged)
	for _, n := range res.Notes {
		fmt.Fprintln(stdout, "  ", n)
	}
	return nil
}
