package app

import (
	"context"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/store"
)

// RequestDeletion records subscriberID's request to delete their data,
// asked by the actor in ctx (the subscriber user on Min side, the API
// client for a merchant's own portal), or returns the one already open
// (created false). store.ErrNotFound when the subscriber is not the
// tenant's; validation.Errors naming message.
func (a *App) RequestDeletion(ctx context.Context, subscriberID, message string) (privacy.Request, bool, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return privacy.Request{}, false, err
	}
	if _, err := a.store.Subscriber(ctx, subscriberID); err != nil {
		return privacy.Request{}, false, err
	}
	who := actor.From(ctx)
	ask := privacy.Ask{SubscriberID: subscriberID, UserID: who.ID, Message: message}
	if who.Kind == actor.Subscriber {
		ask.UserEmail = who.Label
	}
	var (
		out     privacy.Request
		created bool
	)
	err = a.store.InTxRetrying(ctx, func(tx *store.Tx) error {
		out, created, err = privacy.Open(ctx, tx, ask, now)
		return err
	})
	return out, created, err
}

// DeletionRequests lists the tenant's deletion requests matching f.
func (a *App) DeletionRequests(ctx context.Context, f privacy.Filter, p store.Page) ([]privacy.Request, string, error) {
	var (
		out  []privacy.Request
		next string
	)
	err := a.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, next, err = privacy.List(ctx, tx, f, p)
		return err
	})
	return out, next, err
}

// DeletionRequest is the tenant's deletion request id.
func (a *App) DeletionRequest(ctx context.Context, id string) (privacy.Request, error) {
	var out privacy.Request
	err := a.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = privacy.Get(ctx, tx, id)
		return err
	})
	return out, err
}

// ResolveDeletionRequest closes request id as status (Completed or
// Rejected) with the resolution the subscriber is told, by the actor in
// ctx, at the tenant's time.
func (a *App) ResolveDeletionRequest(ctx context.Context, id, status, resolution string) (privacy.Request, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return privacy.Request{}, err
	}
	who := actor.From(ctx)
	by := who.Label
	if by == "" {
		by = who.ID
	}
	var out privacy.Request
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		out, err = privacy.Resolve(ctx, tx, id, status, resolution, by, now)
		return err
	})
	return out, err
}
