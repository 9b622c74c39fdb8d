package subscriberuser

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// Kinds of authorization source.
const (
	// AuthorizationSourceSubscriber: the user is linked to the subscriber
	// whose subscriptions give the access.
	AuthorizationSourceSubscriber = "Subscriber"
	// AuthorizationSourceAccount: an account source links the user to a
	// subscriber account.
	AuthorizationSourceAccount = "AccountSource"
)

// UserAuthorizationData is the data of UserAuthorizationGranted and
// UserAuthorizationRevoked.
type UserAuthorizationData struct {
	UserID string `json:"userId"`
	// SubscriberID is the subscriber whose subscriptions give the access;
	// SubscriberAccountID the account of an account source (null
	// otherwise).
	SubscriberID        string  `json:"subscriberId"`
	SubscriberAccountID *string `json:"subscriberAccountId"`
	// SourceType is AuthorizationSourceSubscriber or
	// AuthorizationSourceAccount; SourceID the id of the account source,
	// or the subscriber's id.
	SourceType string `json:"sourceType"`
	SourceID   string `json:"sourceId"`
	// ProductIDs are the products the change gives or takes right now
	// (empty when the source covers no live subscription yet).
	ProductIDs []string `json:"productIds"`
}

// AddUserAuthorizationEvent records kind (store.EventUserAuthorizationGranted or
// store.EventUserAuthorizationRevoked) for d at business time at, about the
// subject /authorizations/user/{userId}. Call it in the transaction that
// creates or deletes the source, so the event commits or rolls back with
// it.
func AddUserAuthorizationEvent(ctx context.Context, tx *store.Tx, kind string, d UserAuthorizationData, at time.Time) error {
	if kind != store.EventUserAuthorizationGranted && kind != store.EventUserAuthorizationRevoked {
		return fmt.Errorf("subscriberuser: %q is not an authorization event", kind)
	}
	if d.ProductIDs == nil {
		d.ProductIDs = []string{}
	}
	return tx.AddEvents(ctx, []store.NewEvent{{Type: kind, Subject: "/authorizations/user/" + d.UserID, Data: d, At: at}})
}

// liveProductIDs returns the ids of the products that subscriber's live
// periods grant at at (in currency only, when it is not empty: an account
// source grants the account's currency), sorted: the ProductIDs of an
// authorization event.
func liveProductIDs(ctx context.Context, st *store.Store, tx *store.Tx, subscriberID, currency string, at time.Time) ([]string, error) {
	if subscriberID == "" {
		return []string{}, nil
	}
	q := `SELECT DISTINCT s.package_hash FROM subscriptions s
		WHERE s.tenant_id = $1 AND s.subscriber_id = $2 AND s.period_start <= $3 AND` + store.SubscriptionNotOverAt3
	args := []any{tx.TenantID(), subscriberID, store.TimeParam(at)}
	if currency != "" {
		q += ` AND s.currency = $4`
		args = append(args, currency)
	}
	rows, err := tx.QueryBuilt(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("subscriberuser: live products of subscriber %s: %w", subscriberID, err)
	}
	var hashes []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("subscriberuser: live products of subscriber %s: %w", subscriberID, err)
		}
		hashes = append(hashes, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("subscriberuser: live products of subscriber %s: %w", subscriberID, err)
	}
	ids := []string{}
	if len(hashes) == 0 {
		return ids, nil
	}
	products, err := packageLines(ctx, st, tx.TenantID(), hashes)
	if err != nil {
		return nil, fmt.Errorf("subscriberuser: live products of subscriber %s: %w", subscriberID, err)
	}
	for _, lines := range products {
		for _, l := range lines {
			if !slices.Contains(ids, l.ProductID) {
				ids = append(ids, l.ProductID)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// addSourceEvent records kind for an account source (accountID set) or a
// subscriber link (accountID empty) of user, with the products it gives or
// takes at at.
func addSourceEvent(ctx context.Context, st *store.Store, tx *store.Tx, kind, userID, subscriberID, accountID, sourceID, currency string, at time.Time) error {
	products, err := liveProductIDs(ctx, st, tx, subscriberID, currency, at)
	if err != nil {
		return err
	}
	d := UserAuthorizationData{UserID: userID, SubscriberID: subscriberID, SourceType: AuthorizationSourceSubscriber,
		SourceID: subscriberID, ProductIDs: products}
	if accountID != "" {
		d.SubscriberAccountID, d.SourceType, d.SourceID = &accountID, AuthorizationSourceAccount, sourceID
	}
	return AddUserAuthorizationEvent(ctx, tx, kind, d, at)
}
