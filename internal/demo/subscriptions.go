package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
)

// demoSubscribers are the demo tenant's subscribers and what they bought.
var demoSubscribers = []struct {
	name, email, city, postal, template string
}{
	{"Kari Nordmann", "kari@example.no", "Bergen", "5003", "Digital – månedlig"},
	{"Ola Hansen", "ola@example.no", "Tromsø", "9008", "Papir + digital"},
	{"Ingrid Berg", "ingrid@example.no", "Oslo", "0150", "Digital – årlig"},
	{"Nils Johansen", "nils@example.no", "Trondheim", "7010", "Digital – intro 99"},
}

// seedSubscriptions gives the demo tenant subscribers with subscriptions
// on the demo catalog, starting today (the demo clock's start), each with
// the default Invoice payment agreement, as an order's completion creates
// them. Advancing the demo clock then renews them.
func seedSubscriptions(ctx context.Context, s *store.Store, eng *engine.Engine, org store.Organization, now time.Time) error {
	pkgs, _, err := s.ListPackages(ctx, store.PackageFilter{}, store.Page{Limit: 100})
	if err != nil {
		return err
	}
	byName := map[string]string{}
	for _, p := range pkgs {
		byName[p.Name] = p.ID
	}
	loc, err := period.LoadZone(org.TimeZone)
	if err != nil {
		return err
	}
	start := period.StartOfDay(now, loc)
	for _, d := range demoSubscribers {
		tmpl, ok := byName[d.template]
		if !ok {
			return fmt.Errorf("demo: no template %q", d.template)
		}
		sub, err := s.CreateSubscriber(ctx, store.Subscriber{Name: d.name, Email: d.email, Country: "NO",
			Address: store.Address{City: d.city, PostalCode: d.postal, Country: "NO"}, Contacts: []store.Contact{}}, now)
		if err != nil {
			return err
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			agreement, err := tx.InvoiceAgreement(ctx, sub.ID, now)
			if err != nil {
				return err
			}
			// As an order does: a chained template gets its chain instance.
			pkg, err := eng.InstancePackage(ctx, tx, tmpl, catalog.Choices{}, now)
			if err != nil {
				return fmt.Errorf("%s: %w", d.template, err)
			}
			_, err = eng.Start(ctx, tx, engine.NewSeries{SubscriberID: sub.ID, OrganizationID: org.ID, TimeZone: org.TimeZone,
				PaymentAgreementID: &agreement.ID, Package: pkg, Start: start, TemplatePackageID: tmpl}, now)
			return err
		})
		if err != nil {
			return fmt.Errorf("demo: subscription for %s: %w", d.name, err)
		}
	}
	return nil
}
