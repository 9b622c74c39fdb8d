package avtalegiro_test

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestExportSendsWhatIsScheduled: an export sends exactly the account's
// Scheduled claims due by its horizon, in due-date order, and the
// pending cancellations; a claim cancelled while scheduled, one of a
// deleted mandate and one due later are not sent. What is sent comes from
// avtalegiro_claim_queue (migrations 00040, 00042), kept by triggers: after
// every step it holds exactly the Scheduled claims (as readers see them:
// a sent claim's row still says Scheduled, and its sending is an
// avtalegiro_sent_claims row).
func TestExportSendsWhatIsScheduled(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			st, ctx, account, mandate := benchTenant(t, eng)
			queueHoldsScheduled := func(step string) {
				t.Helper()
				var queued, scheduled, mismatched int
				if err := st.DB().QueryRow(`SELECT (SELECT count(*) FROM avtalegiro_claim_queue),
					(SELECT count(*) FROM avtalegiro_claim_states WHERE status = 'Scheduled'),
					(SELECT count(*) FROM avtalegiro_claim_states c WHERE c.status = 'Scheduled' AND NOT EXISTS (SELECT 1 FROM avtalegiro_claim_queue q
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
				c, _, err := avtalegiro.CreateClaim(ctx, st, avtalegiro.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: store.NewID(),
					KID: mandateKID, Amount: amount, DueDate: due, ShortName: "Kari"}, benchNow)
				if err != nil {
					t.Fatal(err)
				}
				return c.ID
			}
			status := func(id, want string) avtalegiro.AvtaleGiroClaim {
				t.Helper()
				c, err := avtalegiro.Claim(ctx, st, id)
				if err != nil || c.Status != want {
					t.Fatalf("claim due %s: %s, want %s (%v)", c.DueDate, c.Status, want, err)
				}
				return c
			}
			// sent reads a file's claims: amounts by assignment type.
			sent := func(f avtalegiro.AvtaleGiroFile) map[int][]int64 {
				t.Helper()
				r := ocrgiro.NewReader(avtalegiro.FileContent(ctx, st, f.ID))
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
			// An hour after the claims were made: a claim's updatedAt says
			// when it was sent.
			exportAt := benchNow.Add(time.Hour)
			export := func(wantOK bool) avtalegiro.AvtaleGiroFile {
				t.Helper()
				f, ok, err := avtalegiro.Export(ctx, st, account, exportAt)
				if err != nil || ok != wantOK {
					t.Fatalf("export: %v %v, want ok %v", ok, err, wantOK)
				}
				return f
			}
			// listed: the ids the claim list gives for a status filter.
			listed := func(status string) []string {
				t.Helper()
				cs, _, err := avtalegiro.ListClaims(ctx, st, avtalegiro.AvtaleGiroClaimFilter{Status: status}, store.Page{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, c := range cs {
					ids = append(ids, c.ID)
				}
				slices.Sort(ids)
				return ids
			}
			sorted := func(ids ...string) []string { slices.Sort(ids); return ids }

			later := claim("2027-03-01", 300)
			first := claim("2027-02-15", 100)
			cancelled := claim("2027-02-20", 200)
			beyond := claim("2029-01-01", 400) // past the export's horizon (MaxAhead months)
			queueHoldsScheduled("created")
			if _, err := avtalegiro.CancelClaim(ctx, st, cancelled, "2027-01-04", benchNow); err != nil {
				t.Fatal(err)
			}
			status(cancelled, avtalegiro.ClaimCancelled)
			queueHoldsScheduled("cancelled while scheduled")

			f := export(true)
			if got := sent(f); f.Transactions != 2 || len(got) != 1 || len(got[ocrgiro.AssignmentClaims]) != 2 ||
				got[ocrgiro.AssignmentClaims][0] != 100 || got[ocrgiro.AssignmentClaims][1] != 300 {
				t.Fatalf("first file: %d transactions, claims %v", f.Transactions, got)
			}
			for _, id := range []string{first, later} {
				if c := status(id, avtalegiro.ClaimSent); c.ClaimFileID == nil || *c.ClaimFileID != f.ID || !c.UpdatedAt.Equal(exportAt) {
					t.Fatalf("sent claim's file %v, updated %v, want %s at %v", c.ClaimFileID, c.UpdatedAt, f.ID, exportAt)
				}
			}
			if got, want := listed(avtalegiro.ClaimSent), sorted(first, later); !slices.Equal(got, want) {
				t.Fatalf("listed Sent: %v, want %v", got, want)
			}
			if got := listed(avtalegiro.ClaimScheduled); !slices.Equal(got, []string{beyond}) {
				t.Fatalf("listed Scheduled: %v, want %s", got, beyond)
			}
			{
				// The sending is recorded apart and the claim rows are not
				// rewritten (migration 00042).
				var rewritten, sendings int
				if err := st.DB().QueryRow(`SELECT (SELECT count(*) FROM avtalegiro_claims WHERE status = 'Sent' OR claim_file_id IS NOT NULL),
					(SELECT count(*) FROM avtalegiro_sent_claims WHERE file_id = $1)`, f.ID).Scan(&rewritten, &sendings); err != nil {
					t.Fatal(err)
				}
				if rewritten != 0 || sendings != 2 {
					t.Fatalf("%d claim rows rewritten, %d sendings recorded; want 0 and 2", rewritten, sendings)
				}
			}
			if c := status(cancelled, avtalegiro.ClaimCancelled); c.ClaimFileID != nil {
				t.Fatalf("cancelled claim sent in %s", *c.ClaimFileID)
			}
			status(beyond, avtalegiro.ClaimScheduled)
			queueHoldsScheduled("exported")
			export(false)

			// A sent claim cancelled before its due date goes in the next
			// file's cancellations, once.
			if _, err := avtalegiro.CancelClaim(ctx, st, later, "2027-01-04", benchNow); err != nil {
				t.Fatal(err)
			}
			if c := status(later, avtalegiro.ClaimCancellationPending); c.ClaimFileID == nil || *c.ClaimFileID != f.ID {
				t.Fatalf("cancelling claim's file %v, want %s", c.ClaimFileID, f.ID)
			}
			if got := listed(avtalegiro.ClaimSent); !slices.Equal(got, []string{first}) {
				t.Fatalf("listed Sent after a cancellation: %v, want %s", got, first)
			}
			claimFile := f.ID
			f = export(true)
			if got := sent(f); f.Transactions != 1 || len(got) != 1 || len(got[ocrgiro.AssignmentCancellations]) != 1 {
				t.Fatalf("cancellation file: %d transactions, %v", f.Transactions, got)
			}
			if c := status(later, avtalegiro.ClaimCancelled); c.CancellationFileID == nil || *c.CancellationFileID != f.ID ||
				c.ClaimFileID == nil || *c.ClaimFileID != claimFile {
				t.Fatalf("cancellation file %v, want %s; claim file %v, want %s", c.CancellationFileID, f.ID, c.ClaimFileID, claimFile)
			}
			export(false)

			// A scheduled claim of a deleted mandate is cancelled with it and
			// not sent.
			orphan := claim("2027-02-25", 500)
			queueHoldsScheduled("created again")
			if _, err := avtalegiro.DeleteMandate(ctx, st, mandate, benchNow); err != nil {
				t.Fatal(err)
			}
			status(orphan, avtalegiro.ClaimCancelled)
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
				c, _, err := avtalegiro.CreateClaim(ctx, st, avtalegiro.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: store.NewID(),
					KID: mandateKID, Amount: int64(1000 + i), DueDate: "2027-02-15", ShortName: "Kari"}, benchNow)
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = c.ID
			}
			var files []avtalegiro.AvtaleGiroFile
			done := make(chan error, 1)
			export := func() error {
				f, ok, err := avtalegiro.Export(ctx, st, account, benchNow)
				if ok {
					files = append(files, f)
				}
				return err
			}
			go func() {
				for range 20 {
					// An export that lost every retry to the cancellations
					// beside it wrote nothing (the caller runs it again,
					// as the last one below does); anything else is a
					// failure.
					if err := export(); err != nil && !errors.Is(err, store.ErrConflict) {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for i := n - 1; i >= 0; i -= 2 { // from the end of the file, where a written claim waits longest
				_, _ = avtalegiro.CancelClaim(ctx, st, ids[i], "2027-01-04", benchNow) // refused once processed: fine
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// With nothing racing it, an export succeeds and sends what is
			// left.
			if err := export(); err != nil {
				t.Fatal(err)
			}
			inClaimFile := map[int64]bool{}
			for _, f := range files {
				r := ocrgiro.NewReader(avtalegiro.FileContent(ctx, st, f.ID))
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
				c, err := avtalegiro.Claim(ctx, st, id)
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

// TestCancellationWaitsForExport: a cancellation of a scheduled claim that
// an export has taken out of the queue (recorded sent, not yet committed)
// waits for the export and then finds the claim Sent: it becomes
// CancellationPending and goes to the bank as a cancellation, instead of
// being Cancelled while the bank collects it. PostgreSQL only: SQLite
// runs one writing transaction at a time.
func TestCancellationWaitsForExport(t *testing.T) {
	for _, eng := range storetest.Engines() {
		if eng != store.Postgres {
			continue
		}
		t.Run(string(eng), func(t *testing.T) {
			st, ctx, _, mandate := benchTenant(t, eng)
			c, _, err := avtalegiro.CreateClaim(ctx, st, avtalegiro.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: store.NewID(),
				KID: mandateKID, Amount: 100, DueDate: "2027-02-15", ShortName: "Kari"}, benchNow)
			if err != nil {
				t.Fatal(err)
			}
			// The export's marking statement, in a transaction left open.
			export, err := st.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = export.Rollback() }()
			var pid int
			if err := export.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if _, err := export.Exec(`WITH taken AS (DELETE FROM avtalegiro_claim_queue WHERE claim_id = $1 RETURNING tenant_id, claim_id)
				INSERT INTO avtalegiro_sent_claims (tenant_id, claim_id, file_id) SELECT tenant_id, claim_id, $2 FROM taken`, c.ID, store.NewID()); err != nil {
				t.Fatal(err)
			}
			type result struct {
				c   avtalegiro.AvtaleGiroClaim
				err error
			}
			done := make(chan result, 1)
			go func() {
				got, err := avtalegiro.CancelClaim(ctx, st, c.ID, "2027-01-04", benchNow)
				done <- result{got, err}
			}()
			// Commit once the cancellation waits for the export.
			for waiting := 0; waiting == 0; {
				if err := st.DB().QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
			}
			if err := export.Commit(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.c.Status != avtalegiro.ClaimCancellationPending {
				t.Fatalf("cancelled during the export: %s %v, want CancellationPending", r.c.Status, r.err)
			}
			if got, err := avtalegiro.Claim(ctx, st, c.ID); err != nil || got.Status != avtalegiro.ClaimCancellationPending {
				t.Fatalf("claim after: %s %v", got.Status, err)
			}
		})
	}
}
