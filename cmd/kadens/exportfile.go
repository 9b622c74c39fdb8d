package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kadens/kadens/internal/atomicfile"
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/store"
)

// The export commands (autogiro export, avtalegiro export) mark what a
// file holds as sent in the transaction that stores the file in the
// database; only then do they write it out. So the file on disk is a copy
// of a stored one: it is written whole or not at all (internal/atomicfile),
// and when writing it fails, or the command is killed, the stored file is
// still there for `kadens autogiro fetch` / `kadens avtalegiro fetch` to
// write again. The stored file's id is printed on stderr as soon as it is
// committed, before the copy starts.

// testPauseVar names the stage at which an export command stops and waits
// to be killed: the kill test of the exports (cmd/kadens, TestKillExport)
// sets it. Stages: "stored" (the items are marked sent and the file is
// stored; nothing is written yet), "writing" (part of the file is written
// to the temporary file), "written" (all of it, not yet in place),
// "committed" (in place, before the summary is printed).
const testPauseVar = "KADENS_TEST_PAUSE"

// pauser returns the function that stops the command at a stage when
// KADENS_TEST_PAUSE names it; otherwise it does nothing.
func pauser(getenv func(string) string, stderr io.Writer) func(stage string) {
	want := getenv(testPauseVar)
	return func(stage string) {
		if want == "" || stage != want {
			return
		}
		fmt.Fprintf(stderr, "paused at %s (%s)\n", stage, testPauseVar)
		for {
			time.Sleep(time.Hour)
		}
	}
}

// checkWritable fails when no file can be created in dir, before an
// export marks anything sent: a wrong -o is a plain error then, with
// nothing to fetch again.
func checkWritable(dir string) error {
	f, err := atomicfile.Create(filepath.Join(dir, "kadens-export"), 0o600)
	if err != nil {
		return fmt.Errorf("cannot write the export file: %w", err)
	}
	f.Abort()
	return nil
}

// writeStored copies a stored file (copyTo writes its bytes) to name,
// whole or not at all, and returns the bytes written. A failure is
// reported by the caller together with how to fetch the file again.
func writeStored(name string, pause func(string), copyTo func(io.Writer) error) (int64, error) {
	pause("stored")
	f, err := atomicfile.Create(name, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	w := &stageWriter{w: f, pause: pause}
	if err := copyTo(w); err != nil {
		return 0, fmt.Errorf("write %s: %w", name, err)
	}
	pause("written")
	if err := f.Commit(); err != nil {
		return 0, err
	}
	pause("committed")
	return w.n, nil
}

// stageWriter counts what is written and passes the "writing" stage
// halfway through the first write, so that a kill there leaves a partial
// temporary file behind.
type stageWriter struct {
	w      io.Writer
	pause  func(string)
	n      int64
	paused bool
}

func (s *stageWriter) Write(p []byte) (int, error) {
	if !s.paused && len(p) > 1 {
		s.paused = true
		n, err := s.w.Write(p[:len(p)/2])
		s.n += int64(n)
		if err != nil {
			return n, err
		}
		s.pause("writing")
		m, err := s.w.Write(p[len(p)/2:])
		s.n += int64(m)
		return n + m, err
	}
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// storedFileError is a failure after the export committed: the items are
// marked sent and the file is in the database; the message says which
// file and the command that writes it again.
func storedFileError(err error, kind, fileID, fetch string) error {
	return fmt.Errorf("%w\nthe %s is stored as file %s and what it holds is marked sent; write it again with:\n  %s", err, kind, fileID, fetch)
}

// autogiroFetch runs `kadens autogiro fetch --tenant T (--file ID |
// --organization ID --latest) [-o FILE]`: writes a stored submission file
// again (as the export wrote it).
func autogiroFetch(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("autogiro fetch", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	id := fs.String("file", "", "the stored file's id (printed by the export)")
	org := fs.String("organization", "", "with --latest: the organization whose newest submission file to write")
	latest := fs.Bool("latest", false, "write the organization's newest submission file")
	out := fs.String("o", "", "the file to write (default: Bankgirot's dataset name in the current directory)")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if (*id == "") == !*latest || *latest && *org == "" {
		return usagef("say --file ID, or --latest with --organization ID")
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
	var f autogiro.AutogiroExportFile
	if *latest {
		f, err = autogiro.LatestExportFile(tctx, st, *org)
	} else {
		f, err = autogiro.StoredExportFile(tctx, st, *id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no such stored Autogiro submission file in tenant %s", *tenant)
	}
	if err != nil {
		return err
	}
	name := *out
	if name == "" {
		name = f.FileName
	}
	n, err := writeStored(name, func(string) {}, func(w io.Writer) error { return autogiro.CopyExportFile(tctx, st, f.ID, w) })
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: file %s (stored %s), %d bytes\n", name, f.ID, f.CreatedAt.Format(time.RFC3339), n)
	return nil
}

// avtalegiroFetch runs `kadens avtalegiro fetch --tenant T (--file ID |
// --account ID --latest) -o FILE`: writes a stored claim file again.
func avtalegiroFetch(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("avtalegiro fetch", stderr, getenv)
	tenant := fs.String("tenant", "", "the tenant (name or id)")
	id := fs.String("file", "", "the stored file's id (printed by the export)")
	account := fs.String("account", "", "with --latest: the AvtaleGiro account whose newest claim file to write")
	latest := fs.Bool("latest", false, "write the account's newest claim file")
	out := fs.String("o", "", "the file to write")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if (*id == "") == !*latest || *latest && *account == "" {
		return usagef("say --file ID, or --latest with --account ID")
	}
	if *out == "" {
		return usagef("-o is required")
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
	var f avtalegiro.AvtaleGiroFile
	if *latest {
		f, err = avtalegiro.LatestClaimFile(tctx, st, *account)
	} else {
		f, err = avtalegiro.File(tctx, st, *id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no such stored AvtaleGiro file in tenant %s", *tenant)
	}
	if err != nil {
		return err
	}
	n, err := writeStored(*out, func(string) {}, func(w io.Writer) error {
		_, err := io.Copy(w, avtalegiro.FileContent(tctx, st, f.ID))
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: file %s (%s %s, transmission %s), %d transactions, %d bytes\n", *out, f.ID, f.Direction, f.Kind,
		f.TransmissionNumber, f.Transactions, n)
	return nil
}
