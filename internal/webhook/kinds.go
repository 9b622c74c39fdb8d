// Package webhook delivers a tenant's events to the HTTP endpoints it
// registered: the validation handshake, Standard Webhooks signatures, the
// EventGrid and CloudEvents envelopes, the dispatcher that turns the events
// outbox into deliveries and retries them, and the guard that keeps
// deliveries away from private networks; its records and SQL (records.go,
// sql.go, queue.go) run on the store's query kit.
package webhook

import (
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
)

// Kinds are the event kinds a registration can subscribe to, named by the
// constants of the packages that record them (a renamed kind cannot drop
// out of webhooks unnoticed). Payloads (the data of each
// kind) are documented in the OpenAPI document (internal/api/webhook.go).
var Kinds = []string{
	store.EventSubscriptionCreated,
	store.EventSubscriptionCancelled,
	store.EventSubscriptionDeactivated,
	store.EventSubscriptionCancellationScheduled,
	store.EventSubscriptionCancellationRemoved,
	store.EventPriceChangeNotified,
	store.EventOrderProcessed,
	store.EventInvoiceIssued,
	store.EventInvoicePaid,
	store.EventCreditNoteIssued,
	invoicing.EventReminderIssued,
	store.EventPaymentCompleted,
	store.EventPaymentFailed,
	store.EventPaymentAgreementCreated,
	store.EventPaymentAgreementDeleted,
	store.EventPeppolDeliveryPending,
	store.EventPeppolDeliverySent,
	store.EventPeppolDeliveryDelivered,
	store.EventPeppolDeliveryFailed,
	store.EventSubscriberCreated,
	store.EventSubscriberDeleted,
	store.EventSubscriberDeletionRequested,
	store.EventSubscriberDeletionResolved,
	store.EventSubscriberContactCreated,
	store.EventSubscriberContactUpdated,
	store.EventSubscriberContactDeleted,
	store.EventUserAuthorizationGranted,
	store.EventUserAuthorizationRevoked,
	store.EventDeliveryStopCreated,
	store.EventDeliveryStopChanged,
	store.EventDeliveryStopDeleted,
	store.EventDeliveryAddressChanged,
	store.EventDistributionListAvailable,
}

// ValidationEventType is the kind of the handshake event in the
// CloudEvents format, sent to a new endpoint only; it cannot be subscribed
// to.
const ValidationEventType = "WebhookValidation"

// ValidationEventTypeEventGrid is the kind of the handshake event in the
// EventGrid format: the name Azure Event Grid gives it, which receivers
// written for Event Grid (and for INFO-Subscription, which delivers through
// it) test for.
const ValidationEventTypeEventGrid = "Microsoft.EventGrid.SubscriptionValidationEvent"

// Formats of a registration.
const (
	FormatEventGrid   = "EventGrid"
	FormatCloudEvents = "CloudEvents"
)
