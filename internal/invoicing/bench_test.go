package invoicing_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// BenchmarkIssuePeriods issues the first invoices of 1,000 new periods
// (ten subscribers) in one call, as an engine batch does, on each engine;
// writing the periods is outside the timing. Compare B/op and allocs/op
// (robust on a busy machine) and ns/op with -cpu 1.
func BenchmarkIssuePeriods(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(string(e), func(b *testing.B) {
			s := storetest.Open(b, e)
			bl := newBilled(b, s)
			subscribers := []string{bl.subr}
			for range 9 {
				sc, err := s.CreateSubscriber(bl.ctx, store.Subscriber{Name: "Ola Nordmann", Country: "NO", Contacts: []store.Contact{}}, t0)
				if err != nil {
					b.Fatal(err)
				}
				subscribers = append(subscribers, sc.ID)
			}
			start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				err := s.InTx(bl.ctx, func(tx *store.Tx) error {
					periods := make([]store.NewPeriod, 0, 1000)
					for i := range 1000 {
						sub, err := engine.Begin(engine.NewSeries{SubscriberID: subscribers[i%10], OrganizationID: bl.org,
							TimeZone: "Europe/Oslo", Package: bl.pkg, Start: start}, start)
						if err != nil {
							return err
						}
						if err := tx.InsertSubscription(bl.ctx, sub); err != nil {
							return err
						}
						periods = append(periods, store.NewPeriod{Sub: sub, At: start})
					}
					b.StartTimer()
					return issuePeriods(bl.ctx, tx, periods)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
