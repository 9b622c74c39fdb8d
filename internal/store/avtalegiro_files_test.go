package store_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// agOCR is an OCR giro file of n payments on account 12345678903;
// serial numbers the transmission and day varies the end records (the
// same payments in other bytes).
func agOCR(t *testing.T, serial, n, day int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ocrgiro.NewWriter(&buf)
	d := ocrgiro.Date{Year: 2027, Month: 2, Day: day}
	_ = w.Begin(ocrgiro.Start{Sender: ocrgiro.NetsID, Number: fmt.Sprintf("%07d", serial), Recipient: "12345678"})
	_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: fmt.Sprintf("%07d", serial), Account: "12345678903"})
	for i := 1; i <= n; i++ {
		if err := w.Payment(ocrgiro.Payment{Type: 15, Number: i, NetsDate: d, Centre: "13", DayCode: "15", PartialSettlement: "1",
			Serial: "00042", Amount: 29900, KID: "000123400000018", FormNumber: "0", ArchiveRef: "150112345", BankDate: d, PayerAccount: "98765432103"}); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.EndAssignment(ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d})
	if err := w.Close(d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func agAccount(t *testing.T, s *store.Store, ctx context.Context) {
	t.Helper()
	if _, err := s.CreateAvtaleGiroAccount(ctx, store.AvtaleGiroAccount{Name: "a", BankAccountNumber: "12345678903", CustomerUnitID: "12345678",
		KIDAlgorithm: "MOD10", KIDLength: 15, LeadDays: 4, BaseComboAPIEndpointURL: "http://bank"}, t0); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAvtaleGiroFileChunks: a file larger than several chunks, imported
// from a reader that hands out bytes unevenly, is stored in chunks that
// read back as the same bytes; the same file again (also as another
// reader) is a repeat that changes nothing; other bytes with the same
// payments are a 400; a malformed file stores nothing.
func TestAvtaleGiroFileChunks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		agAccount(t, s, ctx)
		file := agOCR(t, 1, 5000, 15) // 810 kB: four chunks
		imp, err := s.ImportAvtaleGiroFile(ctx, iotest.HalfReader(bytes.NewReader(file)), t0)
		if err != nil || imp.Repeated || imp.Payments != 5000 || imp.Kind != "Payments" {
			t.Fatalf("import: %+v %v", imp, err)
		}
		f, err := s.AvtaleGiroFile(ctx, imp.FileID)
		sum := sha256.Sum256(file)
		if err != nil || f.SHA256 != hex.EncodeToString(sum[:]) || f.Transactions != 5000 {
			t.Fatalf("file: %+v %v", f, err)
		}
		if got := readAll(t, s.AvtaleGiroFileContent(ctx, imp.FileID)); !bytes.Equal(got, file) {
			t.Fatalf("read back %d bytes, want the %d imported", len(got), len(file))
		}
		var chunks int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM avtalegiro_file_chunks WHERE file_id = $1`, imp.FileID).Scan(&chunks); err != nil || chunks != 4 {
			t.Fatalf("%d chunks %v", chunks, err)
		}
		again, err := s.ImportAvtaleGiroFile(ctx, iotest.OneByteReader(bytes.NewReader(file[:100_000])), t0)
		if err == nil {
			t.Fatalf("a truncated file imported: %+v", again)
		}
		again, err = s.ImportAvtaleGiroFile(ctx, bytes.NewReader(file), t0)
		if err != nil || !again.Repeated || again.FileID != imp.FileID || again.Kind != "Payments" {
			t.Fatalf("again: %+v %v", again, err)
		}
		_, err = s.ImportAvtaleGiroFile(ctx, bytes.NewReader(agOCR(t, 1, 5000, 16)), t0)
		var verrs validation.Errors
		if !errors.As(err, &verrs) || !strings.Contains(err.Error(), "imported before from another file") {
			t.Fatalf("same payments, other bytes: %v", err)
		}
		var files, payments int
		if err := s.DB().QueryRow(`SELECT (SELECT COUNT(*) FROM avtalegiro_files), (SELECT COUNT(*) FROM avtalegiro_payments),
			(SELECT COUNT(*) FROM avtalegiro_file_chunks)`).Scan(&files, &payments, &chunks); err != nil {
			t.Fatal(err)
		}
		if files != 1 || payments != 5000 || chunks != 4 {
			t.Fatalf("%d files, %d payments, %d chunks after the repeats", files, payments, chunks)
		}
		other := newTenant(t, s, "b")
		if _, err := io.ReadAll(s.AvtaleGiroFileContent(other, imp.FileID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant reads the file: %v", err)
		}
	})
}

// TestMigrationAvtaleGiroFileChunks: a file stored whole before migration
// 00034 reads back the same after it.
func TestMigrationAvtaleGiroFileChunks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		agAccount(t, s, ctx)
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		file, id := agOCR(t, 2, 3, 15), store.NewID()
		err = s.RedoMigration(context.Background(), 34, func() error {
			_, err := s.DB().Exec(`INSERT INTO avtalegiro_files (id, tenant_id, direction, kind, transmission_number, sha256, content,
				transactions, created_at) VALUES ($1, $2, 'In', 'Payments', '0000002', 'x', $3, 3, $4)`, id, tenant, file,
				t0.Format("2006-01-02T15:04:05.000000Z"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s.AvtaleGiroFileContent(ctx, id)); !bytes.Equal(got, file) {
			t.Fatalf("after the migration: %q", got)
		}
	})
}

// TestMigrationAvtaleGiroSentClaims: migration 00042 keeps a claim sent
// before it (its row says Sent) Sent in its file, and queues a claim
// scheduled before it for the next file (SQLite had no queue triggers);
// reverting it turns sendings recorded apart (SQLite) back into Sent rows.
func TestMigrationAvtaleGiroSentClaims(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.CreateAvtaleGiroAccount(ctx, store.AvtaleGiroAccount{Name: "a", BankAccountNumber: "12345678903", CustomerUnitID: "12345678",
			KIDAlgorithm: "MOD10", KIDLength: 15, LeadDays: 4, BaseComboAPIEndpointURL: "http://bank"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		const kid = "000123400000018"
		m, err := s.CreateAvtaleGiroMandate(ctx, store.NewAvtaleGiroMandate{AccountID: a.ID, KID: kid}, t0)
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := s.CreateAvtaleGiroClaim(ctx, store.NewAvtaleGiroClaim{MandateID: m, TransactionID: store.NewID(), KID: kid, Amount: 100,
			DueDate: "2026-03-02", ShortName: "Kari"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		export := func() store.AvtaleGiroFile {
			t.Helper()
			f, ok, err := s.ExportAvtaleGiroClaims(ctx, a.ID, "2026-12-31", t0)
			if err != nil || !ok || f.Transactions != 1 {
				t.Fatalf("export: %+v %v %v", f, ok, err)
			}
			return f
		}
		first := export()
		scheduled := store.NewID()
		err = s.RedoMigration(context.Background(), 42, func() error {
			var status, file string
			if err := s.DB().QueryRow(`SELECT status, claim_file_id FROM avtalegiro_claims WHERE id = $1`, c.ID).Scan(&status, &file); err != nil {
				return err
			}
			if status != store.ClaimSent || file != first.ID {
				return fmt.Errorf("reverted: the sent claim's row says %s in %s, want Sent in %s", status, file, first.ID)
			}
			_, err := s.DB().Exec(`INSERT INTO avtalegiro_claims (id, tenant_id, account_id, mandate_id, transaction_id, kid, amount, due_date,
				notify, short_name, external_reference, notice_lines, status, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, 200, '2026-03-02', false, 'Kari', '', '', 'Scheduled', $7, $7)`,
				scheduled, tenant, a.ID, m, store.NewID(), kid, t0.Format("2006-01-02T15:04:05.000000Z"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.AvtaleGiroClaim(ctx, c.ID); err != nil || got.Status != store.ClaimSent || got.ClaimFileID == nil || *got.ClaimFileID != first.ID {
			t.Fatalf("claim sent before the migration: %+v %v", got, err)
		}
		second := export()
		if got, err := s.AvtaleGiroClaim(ctx, scheduled); err != nil || got.Status != store.ClaimSent || got.ClaimFileID == nil || *got.ClaimFileID != second.ID {
			t.Fatalf("claim scheduled before the migration: %+v %v", got, err)
		}
	})
}
