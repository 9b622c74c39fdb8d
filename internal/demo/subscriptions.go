package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
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
// the default Invoice payment agreement: an order per subscriber, completed
// by engine.CompleteOrder exactly as POST /order/{id}/complete completes
// one. Advancing the demo clock then renews them.
func seedSubscriptions(ctx context.Context, s *store.Store, eng *engine.Engine, org store.Organization, now time.Time) error {
	pkgs, _, err := catalogdb.ListPackages(ctx, s, catalogdb.PackageFilter{}, store.Page{Limit: 100})
	if err != nil {
		return err
	}
	byName := map[string]string{}
	for _, p := range pkgs {
		byName[p.Name] = p.ID
	}
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
		o, err := s.CreateOrder(ctx, store.Order{OrganizationID: org.ID, TemplatePackageID: tmpl, SubscriberID: &sub.ID}, now)
		if err == nil {
			_, err = eng.CompleteOrder(ctx, o.ID, now)
		}
		if err != nil {
			return fmt.Errorf("demo: subscription for %s (%s): %w", d.name, d.template, err)
		}
	}
	return nil
}
