// Package webhook delivers a tenant's events to the HTTP endpoints it
// registered: the validation handshake, Standard Webhooks signatures, the
// EventGrid and CloudEvents envelopes, the dispatcher that turns the events
// outbox into deliveries and retries them, and the guard that keeps
// deliveries away from private networks. The SQL lives in internal/store.
package webhook

import "slices"

// Kinds are the event kinds a registration can subscribe to; this list is
// the one place they are named for webhooks. Payloads (the data of each
// kind) are documented in the OpenAPI document (internal/api/webhook.go).
var Kinds = []string{
	"SubscriptionCreated",
	"SubscriptionCancelled",
	"SubscriptionDeactivated",
	"OrderProcessed",
	"InvoiceIssued",
	"InvoicePaid",
	"CreditNoteIssued",
	"ReminderIssued",
	"PaymentCompleted",
	"PaymentFailed",
	"PaymentAgreementCreated",
	"PaymentAgreementDeleted",
}

// ValidationEventType is the kind of the handshake event, sent to a new
// endpoint only; it cannot be subscribed to.
const ValidationEventType = "WebhookValidation"

// IsKind reports whether k is a known event kind (case-sensitive).
func IsKind(k string) bool { return slices.Contains(Kinds, k) }

// Formats of a registration.
const (
	FormatEventGrid   = "EventGrid"
	FormatCloudEvents = "CloudEvents"
)
