package avtalegiro_test

import (
	"errors"
	"io"
	"testing"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestExportSendsWhatIsScheduled: an export sends exactly the account's
// Scheduled claims due by its horizon, in due-date order, and the
// pending cancellations; a claim cancelled while scheduled, one of a
// deleted mandate and one due later are not sent. On PostgreSQL what is
// sent comes from avtalegiro_claim_queue (migration 00040), kept by
// triggers: after every step it holds exactly the Scheduled claims.
func TestExportSendsWhatIsScheduled(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			st, ctx, account, mandate := benchTenant(t, eng)
			queueHoldsScheduled := func(step string) {
				t.Helper()
				if eng != store.Postgres {
					return
				}
				var queued, scheduled, mismatched int
				if err := st.DB().QueryRow(`SELECT (SELECT count(*) FROM avtalegiro_claim_queue),
					(SELECT count(*) FROM avtalegiro_claims WHERE status = 'Scheduled'),
					(SELECT count(*) FROM avtalegiro_claims c WHERE c.status = 'Scheduled' AND NOT EXISTS (SELECT 1 FROM avtalegiro_claim_queue q
						WHERE q.tenant_id = c.tenant_id AND q.account_id = c.account_id AND q.due_date = c.due_date AND q.claim_id = c.id))`).Scan(
					&queued, &scheduled, &mismatched); err != nil {
					t.Fatal(err)
				}
				if queued != scheduled || mismatched != 0 {
					t.Fatalf("%s: %d queued, %d scheduled, %d scheduled not queued", step, queued, scheduled, mismatched)
				}
			}
			claim := func(due string, amount int64) string {
				t.Helper()
				c, _, err := st.CreateAvtaleGiroClaim(ctx, store.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: store.NewID(),
					KID: mandateKID, Amount: amount, DueDate: due, ShortName: "Kari"}, benchNow)
				if err != nil {
					t.Fatal(err)
				}
				return c.ID
			}
			status := func(id, want string) store.AvtaleGiroClaim {
				t.Helper()
				c, err := st.AvtaleGiroClaim(ctx, id)
				if err != nil || c.Status != want {
					t.Fatalf("claim due %s: %s, want %s (%v)", c.DueDate, c.Status, want, err)
				}
				return c
			}
			// sent reads a file's claims: amounts by assignment type.
			sent := func(f store.AvtaleGiroFile) map[int][]int64 {
				t.Helper()
				r := ocrgiro.NewReader(st.AvtaleGiroFileContent(ctx, f.ID))
				if _, err := r.Start(); err != nil {
					t.Fatal(err)
				}
				out := map[int][]int64{}
				typ := 0
				for {
					item, err := r.Next()
					if errors.Is(err, io.EOF) {
						return out
					}
					if err != nil {
						t.Fatal(err)
					}
					switch v := item.(type) {
					case ocrgiro.AssignmentStart:
						typ = v.Type
					case ocrgiro.Claim:
						out[typ] = append(out[typ], v.Amount)
					}
				}
			}
			export := func(wantOK bool) store.AvtaleGiroFile {
				t.Helper()
				f, ok, err := avtalegiro.Export(ctx, st, account, benchNow)
				if err != nil || ok != wantOK {
					t.Fatalf("export: %v %v, want ok %v", ok, err, wantOK)
				}
				return f
			}

			later := claim("2027-03-01", 300)
			first := claim("2027-02-15", 100)
			cancelled := claim("2027-02-20", 200)
			beyond := claim("2029-01-01", 400) // past the export's horizon (MaxAhead months)
			queueHoldsScheduled("created")
			if _, err := st.CancelAvtaleGiroClaim(ctx, cancelled, "2027-01-04", benchNow); err != nil {
				t.Fatal(err)
			}
			status(cancelled, store.ClaimCancelled)
			queueHoldsScheduled("cancelled while scheduled")

			f := export(true)
			if got := sent(f); f.Transactions != 2 || len(got) != 1 || len(got[ocrgiro.AssignmentClaims]) != 2 ||
				got[ocrgiro.AssignmentClaims][0] != 100 || got[ocrgiro.AssignmentClaims][1] != 300 {
				t.Fatalf("first file: %d transactions, claims %v", f.Transactions, got)
			}
			for _, id := range []string{first, later} {
				if c := status(id, store.ClaimSent); c.ClaimFileID == nil || *c.ClaimFileID != f.ID {
					t.Fatalf("sent claim's file %v, want %s", c.ClaimFileID, f.ID)
				}
			}
			if c := status(cancelled, store.ClaimCancelled); c.ClaimFileID != nil {
				t.Fatalf("cancelled claim sent in %s", *c.ClaimFileID)
			}
			status(beyond, store.ClaimScheduled)
			queueHoldsScheduled("exported")
			export(false)

			// A sent claim cancelled before its due date goes in the next
			// file's cancellations, once.
			if _, err := st.CancelAvtaleGiroClaim(ctx, later, "2027-01-04", benchNow); err != nil {
				t.Fatal(err)
			}
			status(later, store.ClaimCancellationPending)
			f = export(true)
			if got := sent(f); f.Transactions != 1 || len(got) != 1 || len(got[ocrgiro.AssignmentCancellations]) != 1 {
				t.Fatalf("cancellation file: %d transactions, %v", f.Transactions, got)
			}
			if c := status(later, store.ClaimCancelled); c.CancellationFileID == nil || *c.CancellationFileID != f.ID {
				t.Fatalf("cancellation file %v, want %s", c.CancellationFileID, f.ID)
			}
			export(false)

			// A scheduled claim of a deleted mandate is cancelled with it and
			// not sent.
			orphan := claim("2027-02-25", 500)
			queueHoldsScheduled("created again")
			if _, err := st.DeleteAvtaleGiroMandate(ctx, mandate, benchNow); err != nil {
				t.Fatal(err)
			}
			status(orphan, store.ClaimCancelled)
			queueHoldsScheduled("mandate deleted")
			export(false)
		})
	}
}

// TestExportRacingCancellations: claims cancelled while exports run never
// end up in a claim file as anything but Sent. On PostgreSQL a cancellation
// can commit between an export reading a claim into its file and marking
// it Sent; the export then starts over without it (store.ErrConflict,
// retried), so the bank is never sent a claim Kadens holds cancelled.
func TestExportRacingCancellations(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			st, ctx, account, mandate := benchTenant(t, eng)
			const n = 300
			ids := make([]string, n)
			for i := range n {
				c, _, err := st.CreateAvtaleGiroClaim(ctx, store.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: store.NewID(),
					KID: mandateKID, Amount: int64(1000 + i), DueDate: "2027-02-15", ShortName: "Kari"}, benchNow)
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = c.ID
			}
			var files []store.AvtaleGiroFile
			done := make(chan error, 1)
			go func() {
				for range 20 {
					f, ok, err := avtalegiro.Export(ctx, st, account, benchNow)
					if err != nil {
						done <- err
						return
					}
					if ok {
						files = append(files, f)
					}
				}
				done <- nil
			}()
			for i := n - 1; i >= 0; i -= 2 { // from the end of the file, where a written claim waits longest
				_, _ = st.CancelAvtaleGiroClaim(ctx, ids[i], "2027-01-04", benchNow) // refused once processed: fine
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			inClaimFile := map[int64]bool{}
			for _, f := range files {
				r := ocrgiro.NewReader(st.AvtaleGiroFileContent(ctx, f.ID))
				if _, err := r.Start(); err != nil {
					t.Fatal(err)
				}
				typ := 0
				for {
					item, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					switch v := item.(type) {
					case ocrgiro.AssignmentStart:
						typ = v.Type
					case ocrgiro.Claim:
						if typ == ocrgiro.AssignmentClaims {
							inClaimFile[v.Amount] = true
						}
					}
				}
			}
			for i, id := range ids {
				c, err := st.AvtaleGiroClaim(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if inClaimFile[int64(1000+i)] && c.ClaimFileID == nil {
					t.Errorf("claim %d is in a claim file but %s without one", i, c.Status)
				}
				if c.ClaimFileID != nil && !inClaimFile[int64(1000+i)] {
					t.Errorf("claim %d is marked sent in %s but in no claim file", i, *c.ClaimFileID)
				}
			}
		})
	}
}
