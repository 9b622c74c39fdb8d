package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/store"
)

// avtalegiroImport runs `kadens avtalegiro import FILE`: a mandate
// notification or OCR giro file from the bank, imported in one transaction
// (again: nothing changes), then the tenant's OCR payments are settled.
func avtalegiroImport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("avtalegiro import", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id) whose AvtaleGiro account the file is for")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if err := parseFlags(fs, cfg, nil); err != nil {
		return err
	}
	// The file is streamed into the import: memory does not grow with it.
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
	began := time.Now()
	res, err := avtalegiro.Import(tctx, st, bufio.NewReaderSize(in, 64<<10), now)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if res.Import.Repeated {
		fmt.Fprintf(stdout, "%s was imported before (file %s); nothing changed\n", file, res.Import.FileID)
		return nil
	}
	fmt.Fprintf(stdout, "%s imported as file %s (%s): %d mandates new or changed, %d deleted, %d payments; %d settled, %d unmatched; %s\n",
		file, res.Import.FileID, res.Import.Kind, res.Import.MandatesChanged, res.Import.MandatesDeleted, res.Import.Payments,
		res.Settled, res.Problems, time.Since(began).Round(time.Millisecond))
	return nil
}

// progressWriter reports every 8 MiB written to stderr.
type progressWriter struct {
	w        io.Writer
	stderr   io.Writer
	n, shown int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if p.n-p.shown >= 8<<20 {
		p.shown = p.n
		fmt.Fprintf(p.stderr, "%d MiB written\n", p.n>>20)
	}
	return n, err
}

// avtalegiroExport runs `kadens avtalegiro export --account ID -o FILE`:
// the account's next claim file (scheduled claims and pending
// cancellations), kept in the database and written to FILE.
func avtalegiroExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("avtalegiro export", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id) of the account")
	account := fs.String("account", "", "the AvtaleGiro account id")
	out := fs.String("o", "", "the file to write")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *account == "" || *out == "" {
		return usagef("--account and -o are required")
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	tctx, now, err := tenantAt(ctx, st, *tenant)
	if err != nil {
		return err
	}
	if err := checkWritable(filepath.Dir(*out)); err != nil {
		return err
	}
	began := time.Now()
	fmt.Fprintln(stderr, "collecting claims…")
	f, ok, err := avtalegiro.Export(tctx, st, *account, now)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no AvtaleGiro account %q in tenant %s", *account, *tenant)
	}
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(stdout, "nothing to send: no scheduled claims or pending cancellations")
		return nil
	}
	// From here on the claims are marked sent: the file in the database
	// is what holds them (see exportfile.go).
	fmt.Fprintf(stderr, "stored as file %s; writing %s\n", f.ID, *out)
	// From the store's chunks to the file, one chunk at a time.
	written, err := writeStored(*out, pauser(getenv, stderr), func(w io.Writer) error {
		_, err := io.Copy(&progressWriter{w: w, stderr: stderr}, avtalegiro.FileContent(tctx, st, f.ID))
		return err
	})
	if err != nil {
		return storedFileError(err, "claim file", f.ID, fmt.Sprintf("kadens avtalegiro fetch --tenant %s --file %s -o %s", *tenant, f.ID, *out))
	}
	fmt.Fprintf(stdout, "%s: file %s, transmission %s, %d transactions, %d bytes in %s\n", *out, f.ID, f.TransmissionNumber,
		f.Transactions, written, time.Since(began).Round(time.Millisecond))
	return nil
}
