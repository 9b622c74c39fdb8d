package webhook

import (
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// The webhook wing's records (docs/WEBHOOKS.md), as sql.go and queue.go
// read and write them in the tables webhooks, webhook_deliveries and
// webhook_attempts. The names are kept from when they were store types:
// /openapi.json names its schemas after them (Webhook, WebhookDelivery,
// WebhookAttempt).

// Webhook is a tenant's registration of an HTTP endpoint for events of
// some kinds. Only a Validated registration receives events; it becomes
// Validated when its endpoint answers the validation handshake or its
// manual validation URL is opened (docs/WEBHOOKS.md).
type Webhook struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes"`
	Format     string   `json:"format" enum:"EventGrid,CloudEvents"`
	Status     string   `json:"status" enum:"Pending,Validated" description:"Pending until the endpoint proved ownership; only Validated registrations receive events."`
	// StatusReason says why a Pending registration receives nothing yet.
	StatusReason *string `json:"statusReason" example:"The endpoint answered the validation event with 404. It receives no events until it proves ownership: open the validationUrl it was sent (until 2027-01-04T09:05:00Z), or PUT the registration to send a new validation event." description:"Pending: why, and what proves ownership (what the last validation event got back, and until when its validationUrl works). null when Validated."`
	// ValidationURLExpiresAt is when the validationUrl of the last
	// validation event stops working (on the tenant's clock).
	ValidationURLExpiresAt *time.Time `json:"validationUrlExpiresAt" description:"Pending: when the validationUrl of the last validation event stops working (5 minutes after it was sent, on the tenant's clock); after it, a PUT sends a new one. null when Validated."`
	DisableValidation      bool       `json:"disableValidation"`
	ValidatedAt            *time.Time `json:"validatedAt"`
	CreatedAt              time.Time  `json:"createdAt"`
	UpdatedAt              time.Time  `json:"updatedAt"`
	// Secret signs deliveries; it is shown once, when created.
	Secret string `json:"-"`
}

// Webhook statuses.
const (
	WebhookPending   = "Pending"
	WebhookValidated = "Validated"
)

// WebhookValidationTTL is how long the validationUrl of a validation event
// works, on the tenant's clock.
const WebhookValidationTTL = 5 * time.Minute

// WebhookValidation is a pending manual validation: the SHA-256 (hex) of the
// validation URL's token and when it was issued, on the tenant's clock.
type WebhookValidation struct {
	TokenHash string
	IssuedAt  time.Time
}

// PendingReason is the statusReason of a Pending registration: failure,
// what the last validation event got back ("" when nothing failed yet: the
// handshake is under way, or the registration changed during it), and what
// still proves ownership, with expires, when the validationUrl of that
// event stops working.
func PendingReason(failure string, expires *time.Time) string {
	var b strings.Builder
	if failure != "" {
		b.WriteString(failure)
		b.WriteString(". ")
	}
	b.WriteString("It receives no events until it proves ownership: ")
	if expires != nil {
		b.WriteString("open the validationUrl it was sent (until " + expires.UTC().Format(time.RFC3339) + "), or ")
	}
	b.WriteString("PUT the registration to send a new validation event.")
	return b.String()
}

// Delivery statuses.
const (
	DeliveryPending   = "Pending"
	DeliveryDelivered = "Delivered"
	DeliveryFailed    = "Failed"
)

// WebhookDelivery is one message sent (or to be sent) to one
// registration: one event, or (EventGrid format) a batch of events that
// were fanned out together. Its id is the webhook-id header of every
// attempt.
type WebhookDelivery struct {
	ID        string   `json:"id"`
	WebhookID string   `json:"webhookId"`
	EventIDs  []string `json:"eventIds" description:"The events the message carries, in order."`
	Status    string   `json:"status" enum:"Pending,Delivered,Failed" description:"Pending until an attempt succeeds (Delivered) or the retry schedule is exhausted (Failed)."`
	// NextAttemptAt is when a Pending delivery is tried next.
	NextAttemptAt *time.Time       `json:"nextAttemptAt"`
	CreatedAt     time.Time        `json:"createdAt"`
	CompletedAt   *time.Time       `json:"completedAt"`
	Attempts      []WebhookAttempt `json:"attempts"`
}

// WebhookAttempt is one HTTP request of a delivery.
type WebhookAttempt struct {
	Number      int       `json:"number"`
	AttemptedAt time.Time `json:"attemptedAt"`
	// StatusCode is the endpoint's answer; null when none came (timeout,
	// refused connection).
	StatusCode *int   `json:"statusCode"`
	LatencyMs  int64  `json:"latencyMs"`
	Error      string `json:"error"`
}

// DeliveryFilter narrows ListDeliveries; zero fields do not filter.
type DeliveryFilter struct {
	Status string
}

// The dispatcher's side. These work across tenants: the dispatcher serves
// every tenant, and each row carries its tenant.

// DeliveryJob is a claimed attempt of a delivery, with what sending it
// needs.
type DeliveryJob struct {
	ID        string
	TenantID  string
	WebhookID string
	// Attempt is the number of this attempt (1 for the first), RetryBase
	// the attempts made before the last redelivery.
	Attempt, RetryBase int
	URL                string
	Format             string
	Secret             string
	// Events are the events of the message, in order.
	Events []store.Event
}

// DeliveryResult is the outcome of a DeliveryJob.
type DeliveryResult struct {
	ID      string
	Attempt int
	At      time.Time
	// StatusCode is 0 when no answer came.
	StatusCode int
	Latency    time.Duration
	Error      string
	Delivered  bool
	// NextAt is when to try again after a failure; nil makes the delivery
	// Failed.
	NextAt *time.Time
}
