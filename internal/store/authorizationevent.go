package store

import (
	"context"
	"fmt"
	"time"
)

// Events about what a subscriber user may use (docs/WEBHOOKS.md), the
// counterparts of INFO-Subscription's UserAuthorizationGranted and
// UserAuthorizationRevoked. They are recorded by AddUserAuthorizationEvent
// in the transaction of the change that gives or takes the access: an
// account source created or deleted, a user linked to or unlinked from a
// subscriber.
const (
	EventUserAuthorizationGranted = "UserAuthorizationGranted"
	EventUserAuthorizationRevoked = "UserAuthorizationRevoked"
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

// AddUserAuthorizationEvent records kind (EventUserAuthorizationGranted or
// EventUserAuthorizationRevoked) for d at business time at, about the
// subject /authorizations/user/{userId}. Call it in the transaction that
// creates or deletes the source, so the event commits or rolls back with
// it.
func (tx *Tx) AddUserAuthorizationEvent(ctx context.Context, kind string, d UserAuthorizationData, at time.Time) error {
	if kind != EventUserAuthorizationGranted && kind != EventUserAuthorizationRevoked {
		return fmt.Errorf("store: %q is not an authorization event", kind)
	}
	if d.ProductIDs == nil {
		d.ProductIDs = []string{}
	}
	return tx.AddEvents(ctx, []NewEvent{{Type: kind, Subject: "/authorizations/user/" + d.UserID, Data: d, At: at}})
}
