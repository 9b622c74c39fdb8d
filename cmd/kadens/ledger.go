package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"io"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// errLedgerProblems makes `kadens ledger check` exit non-zero after it
// printed what it found.
var errLedgerProblems = errors.New("ledger check found problems")

// ledgerCheck runs `kadens ledger check`: it verifies the billing ledger
// of every tenant (or --tenant) and prints each problem with what to do.
// Progress goes to stderr every 10,000 rows of a step, so only big tenants
// report it.
func ledgerCheck(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("ledger check", stderr, getenv)
	tenant := fs.String("tenant", "", "check only this tenant (name or id); default all tenants")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	o := ledger.Options{Progress: func(tenantID, step string, done int) {
		fmt.Fprintf(stderr, "tenant %s: %d %s checked\n", tenantID, done, step)
	}}
	if *tenant != "" {
		t, err := st.TenantByID(ctx, *tenant)
		if errors.Is(err, store.ErrNotFound) {
			t, err = st.TenantByName(ctx, *tenant)
		}
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no tenant %q", *tenant)
		}
		if err != nil {
			return err
		}
		o.TenantID = t.ID
	}
	began := time.Now()
	rep, err := ledger.Check(ctx, st, o)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := printJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintln(stdout, p)
		}
		if rep.Found > len(rep.Problems) {
			fmt.Fprintf(stdout, "… and %d more problems (the first %d are shown)\n", rep.Found-len(rep.Problems), len(rep.Problems))
		}
		verdict := "ledger clean"
		if !rep.Clean() {
			verdict = fmt.Sprintf("ledger has %d problems", rep.Found)
		}
		fmt.Fprintf(stdout, "%s: %d tenants, %d accounts, %d invoices, %d payment demands, %d payments, %d account items checked in %s\n",
			verdict, rep.Tenants, rep.Accounts, rep.Invoices, rep.Demands, rep.Payments, rep.Items, time.Since(began).Round(time.Millisecond))
	}
	if !rep.Clean() {
		return fmt.Errorf("%w: %d", errLedgerProblems, rep.Found)
	}
	return nil
}
