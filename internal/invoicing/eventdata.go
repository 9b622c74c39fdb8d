package invoicing

import (
	"time"

	"github.com/kadens/kadens/internal/catalog"
)

// InvoiceEventData is the data of InvoiceIssued and InvoicePaid: the ids a
// receiver needs, and the invoice's number, due date, amount and currency
// (the facts INFO-Subscription's receivers read from these events without
// fetching the invoice). number repeats invoiceNumber under the name those
// receivers use. Fields are in the order of their names, the order
// encoding/json writes a map's keys in, as the events were written before.
type InvoiceEventData struct {
	Amount          catalog.Amount `json:"amount"`
	Currency        string         `json:"currency"`
	DueAt           time.Time      `json:"dueAt"`
	DueDate         string         `json:"dueDate"`
	InvoiceID       string         `json:"invoiceId"`
	InvoiceNumber   int64          `json:"invoiceNumber"`
	Number          int64          `json:"number"`
	OrganizationID  string         `json:"organizationId"`
	PaymentDemandID string         `json:"paymentDemandId"`
	SubscriberID    string         `json:"subscriberId"`
	SubscriptionID  *string        `json:"subscriptionId"`
}

// CreditNoteEventData is the data of CreditNoteIssued: the credit note and
// the invoice it credits, with the note's number, amount and currency.
type CreditNoteEventData struct {
	Amount           catalog.Amount `json:"amount"`
	CreditNoteID     string         `json:"creditNoteId"`
	CreditNoteNumber int64          `json:"creditNoteNumber"`
	Currency         string         `json:"currency"`
	InvoiceID        string         `json:"invoiceId"`
	InvoiceNumber    int64          `json:"invoiceNumber"`
	Number           int64          `json:"number"`
	OrganizationID   string         `json:"organizationId"`
	PaymentDemandID  string         `json:"paymentDemandId"`
	SubscriberID     string         `json:"subscriberId"`
	SubscriptionID   *string        `json:"subscriptionId"`
}
