package subscriberuser_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// The fixtures of the identity records' tests, as the store's tests had
// them when the SQL lived there.

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

var catalogNow = time.Date(2026, 2, 1, 9, 30, 0, 123456000, time.UTC)

func newTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, t0)
}

// agreementFixture: an organization and two subscribers of one tenant.
type agreementFixture struct {
	s         *store.Store
	ctx       context.Context
	org       store.Organization
	sub, sub2 store.Subscriber
}

func newAgreementFixture(t *testing.T, s *store.Store, ctx context.Context) agreementFixture {
	t.Helper()
	f := agreementFixture{s: s, ctx: ctx}
	sd := seed.NewStore(t, s, ctx, catalogNow)
	f.org = sd.Organization(seed.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: seed.Bool(false)})
	f.sub = sd.Subscriber(seed.Subscriber{Name: "Kari Nordmann"})
	f.sub2 = sd.Subscriber(seed.Subscriber{Name: "Ola Nordmann"})
	return f
}

func (f agreementFixture) agreement(t *testing.T, sub, typ, ref, method string) store.PaymentAgreement {
	t.Helper()
	a, created, err := f.s.CreatePaymentAgreement(f.ctx, store.PaymentAgreement{SubscriberID: sub, ProviderType: typ,
		ProviderAgreementReference: ref, PaymentMethod: method}, catalogNow)
	if err != nil || (!created && typ != store.ProviderInvoice) {
		t.Fatalf("create %s agreement: %v (created %t)", typ, err, created)
	}
	return a
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
