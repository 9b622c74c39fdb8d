package store_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestMigrationAvtaleGiroFileChunks: a file stored whole before migration
// 00034 reads back the same after it.
func TestMigrationAvtaleGiroFileChunks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The bytes as stored: the migration moves them whatever they say.
		file, id := bytes.Repeat([]byte("NY000010"+strings.Repeat("0", 72)+"\r\n"), 300), store.NewID()
		err = s.RedoMigration(context.Background(), 34, func() error {
			_, err := s.DB().Exec(`INSERT INTO avtalegiro_files (id, tenant_id, direction, kind, transmission_number, sha256, content,
				transactions, created_at) VALUES ($1, $2, 'In', 'Payments', '0000002', 'x', $3, 3, $4)`, id, tenant, file,
				t0.Format("2006-01-02T15:04:05.000000Z"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(avtalegiro.FileContent(ctx, s, id)); err != nil || !bytes.Equal(got, file) {
			t.Fatalf("after the migration: %d bytes (%v), want %d", len(got), err, len(file))
		}
	})
}

// TestMigrationAvtaleGiroSentClaims: migration 00042 keeps a claim sent
// before it (its row says Sent) Sent in its file, and queues a claim
// scheduled before it for the next file (SQLite had no queue triggers);
// reverting it turns sendings recorded apart (SQLite) back into Sent rows.
// (The migration tests stay in the store, which alone reaches
// RedoMigration; they write files through the wing, which this external
// test package may import.)
func TestMigrationAvtaleGiroSentClaims(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		tenant, err := tenancy.From(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := avtalegiro.CreateAccount(ctx, s, avtalegiro.AvtaleGiroAccount{Name: "a", BankAccountNumber: "12345678903", CustomerUnitID: "12345678",
			KIDAlgorithm: "MOD10", KIDLength: 15, LeadDays: 4, BaseComboAPIEndpointURL: "http://bank"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		const kid = "000123400000018"
		m, err := avtalegiro.CreateMandate(ctx, s, avtalegiro.NewAvtaleGiroMandate{AccountID: a.ID, KID: kid}, t0)
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := avtalegiro.CreateClaim(ctx, s, avtalegiro.NewAvtaleGiroClaim{MandateID: m, TransactionID: store.NewID(), KID: kid, Amount: 100,
			DueDate: "2026-03-02", ShortName: "Kari"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		export := func() avtalegiro.AvtaleGiroFile {
			t.Helper()
			f, ok, err := avtalegiro.ExportClaims(ctx, s, a.ID, "2026-12-31", t0)
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
			if status != avtalegiro.ClaimSent || file != first.ID {
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
		if got, err := avtalegiro.Claim(ctx, s, c.ID); err != nil || got.Status != avtalegiro.ClaimSent || got.ClaimFileID == nil || *got.ClaimFileID != first.ID {
			t.Fatalf("claim sent before the migration: %+v %v", got, err)
		}
		second := export()
		if got, err := avtalegiro.Claim(ctx, s, scheduled); err != nil || got.Status != avtalegiro.ClaimSent || got.ClaimFileID == nil || *got.ClaimFileID != second.ID {
			t.Fatalf("claim scheduled before the migration: %+v %v", got, err)
		}
	})
}
