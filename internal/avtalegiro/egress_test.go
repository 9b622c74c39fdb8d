package avtalegiro_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/fakebank"
	"github.com/kadens/kadens/internal/egress"
)

// The bank interface's connections pass the egress policy at dial time:
// an account whose address is a name resolving to 127.0.0.1 (localhost;
// stored as if it had resolved publicly when it was registered) is
// refused when the sync calls it, at once rather than after the retries,
// and the bank gets nothing. The API refuses such an address at
// registration (TestEgressAtRegistration in internal/api).
func TestBankAddressEgress(t *testing.T) {
	t.Parallel()
	bank := fakebank.New("12345678903")
	srv := httptest.NewServer(bank)
	t.Cleanup(srv.Close)
	account := avtalegiro.AvtaleGiroAccount{CustomerUnitID: "12345678",
		BaseComboAPIEndpointURL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/nets"}
	client := func(p egress.Policy) *avtalegiro.Bank {
		b := avtalegiro.NewBank(p)
		b.Backoff, b.MaxBackoff, b.Timeout = time.Millisecond, time.Millisecond, 5*time.Second
		return b
	}
	refused := func(what string, err error) {
		t.Helper()
		var be *avtalegiro.BankError
		if !errors.As(err, &be) || be.Attempts != 1 || !strings.Contains(be.Message, "--egress-allow-private") {
			t.Fatalf("%s: %v, want one refused attempt naming --egress-allow-private", what, err)
		}
	}
	ctx := context.Background()
	b := client(egress.Policy{})
	refused("submit", b.Submit(ctx, account, "0000001", func() (io.Reader, error) { return bytes.NewReader([]byte("NY")), nil }))
	_, err := b.Files(ctx, account)
	refused("list", err)
	refused("fetch", b.Fetch(ctx, account, "f1", func(io.Reader) error { return nil }))
	// Link-local allowed is not loopback allowed.
	_, err = client(egress.Policy{LinkLocal: true}).Files(ctx, account)
	refused("list with link-local allowed", err)
	if n := bank.Requests(); n != 0 {
		t.Fatalf("the bank on loopback got %d requests", n)
	}
	// Allowed by the operator, the same address answers.
	if _, err := client(egress.Policy{Private: true}).Files(ctx, account); err != nil {
		t.Fatalf("list with private addresses allowed: %v", err)
	}
	if n := bank.Requests(); n != 1 {
		t.Fatalf("the bank got %d requests, want 1", n)
	}
}
