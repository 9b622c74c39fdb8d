package peppol

import (
	"errors"
	"time"
)

// Peppol's records (docs/PEPPOL.md), as sql.go reads and writes them in
// peppol_deliveries. The names are kept from when they were store types:
// /openapi.json names its schema after PeppolDelivery.

// Kinds of documents sent through the Peppol network.
const (
	PeppolInvoice    = "Invoice"
	PeppolCreditNote = "CreditNote"
)

// Statuses of a Peppol delivery (docs/PEPPOL.md has the states × events
// table).
const (
	PeppolPending   = "Pending"   // recorded; waiting for (another) attempt
	PeppolSent      = "Sent"      // handed to the access point (or dropped in its directory)
	PeppolDelivered = "Delivered" // the access point reports it reached the recipient's
	PeppolFailed    = "Failed"    // given up: FailureReason says why
)

// PeppolDelivery is the delivery of one invoice or credit note through the
// Peppol network: at most one per document.
type PeppolDelivery struct {
	ID            string     `json:"id" description:"Also the idempotency key the access point receives on every attempt."`
	DocumentKind  string     `json:"documentKind" enum:"Invoice,CreditNote"`
	DocumentID    string     `json:"documentId"`
	InvoiceID     string     `json:"invoiceId" description:"The invoice, or the invoice the credit note credits."`
	Recipient     string     `json:"recipient" example:"iso6523-actorid-upis::0192:923609016" description:"The buyer's Peppol participant id."`
	Adapter       string     `json:"adapter" enum:"AccessPoint,Directory" description:"How the document leaves Kadens: an access point's HTTP API or a directory an access point picks files up from."`
	Status        string     `json:"status" enum:"Pending,Sent,Delivered,Failed"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"nextAttemptAt" description:"When a Pending delivery is tried again, or a Sent one's status is next asked for."`
	MessageID     string     `json:"messageId" description:"The access point's id of the message, once it has one."`
	FailureReason string     `json:"failureReason" description:"Why the delivery failed (Failed) or why the last attempt did (Pending)."`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
}

// DueDelivery names a delivery that is due, across tenants.
type DueDelivery struct {
	TenantID string
	ID       string
}

// PeppolOutcome is what an attempt (or a status poll) found.
type PeppolOutcome struct {
	Status    string
	MessageID string // kept when empty
	Reason    string
	// Next is when to try or ask again (Pending, Sent); nil otherwise.
	Next *time.Time
}

// ErrClaimLost: the claim expired and another process took the delivery
// over; the attempt's outcome is not recorded.
var ErrClaimLost = errors.New("peppol: delivery claim lost")
