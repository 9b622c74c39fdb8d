package app

import (
	"context"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/webhook"
)

// Webhook is the tenant's webhook registration id (its secret is never
// read back); store.ErrNotFound when there is none.
func (a *App) Webhook(ctx context.Context, id string) (webhook.Webhook, error) {
	return webhook.Registration(ctx, a.store, id)
}

// Webhooks lists the tenant's webhook registrations, a page at a time.
func (a *App) Webhooks(ctx context.Context, p store.Page) ([]webhook.Webhook, string, error) {
	return webhook.List(ctx, a.store, p)
}

// WebhookDeliveries lists the deliveries of webhook id that f selects,
// oldest first, with their attempts; store.ErrNotFound for an unknown
// webhook.
func (a *App) WebhookDeliveries(ctx context.Context, id string, f webhook.DeliveryFilter, p store.Page) ([]webhook.WebhookDelivery, string, error) {
	return webhook.ListDeliveries(ctx, a.store, id, f, p)
}

// RedeliverWebhook queues delivery deliveryID of webhook id again, due
// now on the wall clock the dispatcher attempts by, whatever its status;
// its retry schedule starts over and its webhook-id stays the same.
// store.ErrNotFound when the delivery is not the webhook's or either is
// unknown.
func (a *App) RedeliverWebhook(ctx context.Context, id, deliveryID string) error {
	return webhook.Redeliver(ctx, a.store, id, deliveryID, a.wall().UTC())
}
