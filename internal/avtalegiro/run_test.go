package avtalegiro_test

import (
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/store"
)

// TestSyncerSyncsEveryAccount: the server's schedule (Syncer.SyncAll)
// reaches an account without anyone naming it, submits its claim file once,
// and a second round sends nothing again.
func TestSyncerSyncsEveryAccount(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		mandate := create(t, c.tn, "/avtalegiro/mandate", map[string]any{"accountId": c.account, "kid": mandateKID})
		create(t, c.tn, "/avtalegiro/claim", map[string]any{"mandateId": mandate, "amount": 100, "dueDate": "2027-02-01"})
		s := &avtalegiro.Syncer{Store: e.Store, Bank: c.client}
		for range 2 {
			if err := s.SyncAll(c.ctx); err != nil {
				t.Fatal(err)
			}
		}
		if c.bank.Files() != 1 {
			t.Fatalf("the bank has %d files, want 1", c.bank.Files())
		}
		if received, _ := c.bank.Claims(); len(received) != 1 {
			t.Fatalf("the bank has %d claims, want 1", len(received))
		}
	})
}

// TestClaimCreatedOnceUnderRace: the outbox consumer and a redelivery (or
// another process) creating the same claim at once both succeed, and there
// is one claim.
func TestClaimCreatedOnceUnderRace(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		mandate := create(t, c.tn, "/avtalegiro/mandate", map[string]any{"accountId": c.account, "kid": mandateKID})
		errs, txID := make([]error, 8), store.NewID()
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, _, errs[i] = avtalegiro.CreateClaim(c.ctx, e.Store, avtalegiro.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: txID,
					KID: mandateKID, Amount: 100, DueDate: "2027-02-01"}, c.now)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
		}
		claims, _, err := avtalegiro.ListClaims(c.ctx, e.Store, avtalegiro.AvtaleGiroClaimFilter{MandateID: mandate}, store.Page{Limit: 10})
		if err != nil || len(claims) != 1 {
			t.Fatalf("%d claims, %v", len(claims), err)
		}
	})
}
