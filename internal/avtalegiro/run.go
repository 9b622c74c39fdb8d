package avtalegiro

import (
	"context"
	"errors"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Syncer runs Sync for every live AvtaleGiro account of every tenant on a
// schedule (SyncAll is the provider's Poll, see Registration), so claims reach the bank before its deadline and payments come
// back without an operator. Several processes may run one: Export writes
// each claim once and the bank takes a transmission number once.
type Syncer struct {
	Store *store.Store
	Bank  *Bank
	// Now is the wall clock (default time.Now); a test tenant syncs at its
	// own clock.
	Now func() time.Time
}

// SyncAll syncs every account once. An account whose bank fails does not
// stop the others; the errors are returned together.
func (s *Syncer) SyncAll(ctx context.Context) error {
	wall := time.Now
	if s.Now != nil {
		wall = s.Now
	}
	tenants, err := s.Store.Tenants(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tenants {
		tctx := tenancy.With(ctx, t.ID)
		now := t.Now(wall())
		cursor := ""
		for {
			accounts, next, err := ListAccounts(tctx, s.Store, AvtaleGiroAccountFilter{}, store.Page{Limit: 100, After: cursor})
			if err != nil {
				errs = append(errs, err)
				break
			}
			for _, a := range accounts {
				if a.BaseComboAPIEndpointURL == "" {
					continue
				}
				if _, err := Sync(ctx, s.Store, s.Bank, t.ID, a.ID, now); err != nil {
					errs = append(errs, err)
				}
			}
			if next == "" {
				break
			}
			cursor = next
		}
	}
	return errors.Join(errs...)
}
