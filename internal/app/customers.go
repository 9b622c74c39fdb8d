package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Organization is the tenant's organization id; store.ErrNotFound when
// there is none.
func (a *App) Organization(ctx context.Context, id string) (store.Organization, error) {
	return a.store.Organization(ctx, id)
}

// Organizations lists the tenant's organizations matching f, a page at a
// time; the string is the cursor of the next page ("" at the end).
func (a *App) Organizations(ctx context.Context, f store.OrganizationFilter, p store.Page) ([]store.Organization, string, error) {
	return a.store.ListOrganizations(ctx, f, p)
}

// CreateOrganization stores a new organization (its fields already
// checked by the surface) and returns it with its id.
func (a *App) CreateOrganization(ctx context.Context, o store.Organization) (store.Organization, error) {
	return a.store.CreateOrganization(ctx, o, a.wall())
}

// UpdateOrganization replaces the fields of organization o.ID;
// store.ErrNotFound when there is none.
func (a *App) UpdateOrganization(ctx context.Context, o store.Organization) (store.Organization, error) {
	return a.store.UpdateOrganization(ctx, o, a.wall())
}

// DeleteOrganization deletes organization id: store.ErrNotFound when there
// is none, validation.Errors naming id when subscriptions or orders of it
// are kept as billing history.
func (a *App) DeleteOrganization(ctx context.Context, id string) error {
	err := a.store.DeleteOrganization(ctx, id)
	if errors.Is(err, store.ErrOrganizationHasHistory) {
		return validation.Field("id", "the organization has subscriptions or orders, which are kept as billing history; it cannot be deleted")
	}
	return err
}

// Subscriber is the tenant's subscriber id; store.ErrNotFound when there is
// none.
func (a *App) Subscriber(ctx context.Context, id string) (store.Subscriber, error) {
	return a.store.Subscriber(ctx, id)
}

// Subscribers lists the tenant's subscribers matching f, a page at a time.
func (a *App) Subscribers(ctx context.Context, f store.SubscriberFilter, p store.Page) ([]store.Subscriber, string, error) {
	return a.store.ListSubscribers(ctx, f, p)
}

// CreateSubscriber stores a new subscriber (its fields already checked by
// the surface), assigning the next subscriber number when it has none. A
// number or external id another subscriber has is a validation.Errors
// naming subscriberNumber or externalId.
func (a *App) CreateSubscriber(ctx context.Context, sub store.Subscriber) (store.Subscriber, error) {
	created, err := a.store.CreateSubscriber(ctx, sub, a.wall())
	if err != nil {
		return created, subscriberStoreError(err, sub)
	}
	return created, nil
}

// UpdateSubscriber replaces the fields of subscriber sub.ID (keeping its
// number when sub has none): store.ErrNotFound when there is none, and the
// errors of CreateSubscriber.
func (a *App) UpdateSubscriber(ctx context.Context, sub store.Subscriber) (store.Subscriber, error) {
	updated, err := a.store.UpdateSubscriber(ctx, sub, a.wall())
	if err != nil {
		return updated, subscriberStoreError(err, sub)
	}
	return updated, nil
}

// DeleteSubscriber deletes subscriber id at the tenant's time:
// store.ErrNotFound when there is none, validation.Errors naming id while
// it has live subscriptions or open orders, or billing history.
func (a *App) DeleteSubscriber(ctx context.Context, id string) error {
	now, err := a.Now(ctx)
	if err != nil {
		return err
	}
	if err := a.store.DeleteSubscriber(ctx, id, now); err != nil {
		return subscriberDeleteError(err)
	}
	return nil
}

// subscriberStoreError explains the store's uniqueness errors in terms of
// the subscriber's fields.
func subscriberStoreError(err error, sub store.Subscriber) error {
	switch {
	case errors.Is(err, store.ErrSubscriberNumberTaken):
		return validation.Field("subscriberNumber", "%d is already the number of another subscriber", sub.SubscriberNumber)
	case errors.Is(err, store.ErrExternalIDTaken):
		return validation.Field("externalId", "%q is already the external id of another subscriber", sub.ExternalID)
	case errors.Is(err, store.ErrSubscriberNumberRange):
		return validation.Field("subscriberNumber", "%d is not between 1 and %d", sub.SubscriberNumber, int64(store.MaxSubscriberNumber))
	case errors.Is(err, store.ErrCounterExhausted):
		return validation.Field("subscriberNumber", "no number is left to assign; give one explicitly")
	}
	return err
}

// subscriberDeleteError explains why a subscriber cannot be deleted, as a
// validation error naming id.
func subscriberDeleteError(err error) error {
	var inUse *store.InUseError
	switch {
	case errors.As(err, &inUse) && inUse.By == "live subscription":
		return validation.Field("id", "subscriber %s has live subscriptions (%s); cancel them and delete the subscriber once they have ended",
			inUse.ID, strings.Join(inUse.IDs, ", "))
	case errors.As(err, &inUse):
		return validation.Field("id", "subscriber %s has open orders (%s); cancel or complete them first", inUse.ID, strings.Join(inUse.IDs, ", "))
	case errors.Is(err, store.ErrSubscriberHasHistory):
		return validation.Field("id", "the subscriber has subscriptions, orders or payment agreements on record, which are kept as billing history; it cannot be deleted")
	}
	return err
}

// OrganizationZone is the time zone organization id's documents show
// their dates in: its own, UTC when it has none the engine knows or the
// organization is gone.
func (a *App) OrganizationZone(ctx context.Context, id string) (*time.Location, error) {
	org, err := a.store.Organization(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return time.UTC, nil
	}
	if err != nil {
		return nil, err
	}
	if loc, err := period.LoadZone(org.TimeZone); err == nil {
		return loc, nil
	}
	return time.UTC, nil
}
