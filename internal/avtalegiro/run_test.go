package avtalegiro_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
)

// TestSyncerSyncsEveryAccount: the server's schedule (Syncer.SyncAll)
// reaches an account without anyone naming it, submits its claim file once,
// and a second round sends nothing again.
func TestSyncerSyncsEveryAccount(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		mandate := create(t, c.tn, "/avtalegiro/mandate", map[string]any{"accountId": c.account, "kid": mandateKID})
		create(t, c.tn, "/avtalegiro/claim", map[string]any{"mandateId": mandate, "amount": 100, "dueDate": "2027-02-01"})
		s := &avtalegiro.Syncer{Store: e.Store, Bank: c.client, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
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
