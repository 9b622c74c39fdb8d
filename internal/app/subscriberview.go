package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// OpenAccountItems are the charges and allowances booked on the
// subscriber's account in currency by the tenant's time that the next
// invoices will still bill or apply, oldest first; account is "" while
// the subscriber has no account in the currency.
func (a *App) OpenAccountItems(ctx context.Context, subscriberID, currency string) (account string, items []store.OpenItem, err error) {
	now, err := a.Now(ctx)
	if err != nil {
		return "", nil, err
	}
	return a.store.OpenItemsOf(ctx, store.AccountKey{SubscriberID: subscriberID, Currency: currency}, now)
}

// SubscriberUser is a subscriber's user with what it may read now.
type SubscriberUser struct {
	subscriberuser.SubscriberUser
	Access subscriberuser.UserAccess
}

// SubscriberUsers are the users linked to subscriber id (the first
// limit), each with its entitlements at the tenant's time, as the API's
// access check evaluates them (subscriberuser.AccessOf).
func (a *App) SubscriberUsers(ctx context.Context, id string, limit int) ([]SubscriberUser, bool, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return nil, false, err
	}
	us, next, err := subscriberuser.ListSubscriberUsers(ctx, a.store, subscriberuser.SubscriberUserFilter{SubscriberID: id}, store.Page{Limit: limit})
	if err != nil {
		return nil, false, err
	}
	out := make([]SubscriberUser, len(us))
	for i, u := range us {
		acc, err := subscriberuser.AccessOf(ctx, a.store, u.ID, now)
		if err != nil {
			return nil, false, err
		}
		out[i] = SubscriberUser{SubscriberUser: u, Access: acc}
	}
	return out, next != "", nil
}
