package autogiro

import (
	"github.com/kadens/kadens/internal/ledger"
	"time"

	"github.com/kadens/kadens/internal/billing"
)

// Autogiro's records (docs/AUTOGIRO.md), as sql.go and sql_files.go read
// and write them in the tables of migrations 00021, 00031, 00035, 00039
// and 00043. internal/api shows them through its own views; the names are
// kept from when they were store types.

// Mandate and transaction statuses.
const (
	AutogiroCreated   = "Created"
	AutogiroSent      = "Sent"
	AutogiroActive    = "Active"
	AutogiroRejected  = "Rejected"
	AutogiroCancelled = "Cancelled"
	AutogiroCompleted = "Completed"
	AutogiroFailed    = "Failed"

	AutogiroDebit  = "Debit"
	AutogiroRefund = "Refund"
)

// AutogiroAccount is a payee's Autogiro agreement with Bankgirot: the
// organization's customer number and the bankgiro number payments go to.
type AutogiroAccount struct {
	ID                     string    `json:"id"`
	OrganizationID         string    `json:"organizationId"`
	BankgiroCustomerNumber string    `json:"bankgiroCustomerNumber" description:"The payee's customer number at Bankgirot (kundnummer), up to 6 digits."`
	BankgiroNumber         string    `json:"bankgiroNumber" description:"The payee's bankgiro number, digits only."`
	Name                   string    `json:"name"`
	CreatedAt              time.Time `json:"createdAt"`
	UpdatedAt              time.Time `json:"updatedAt"`
}

// AutogiroMandate is a payer's consent to be debited through Autogiro.
type AutogiroMandate struct {
	ID                string    `json:"id"`
	AccountID         string    `json:"accountId"`
	SubscriberID      string    `json:"subscriberId"`
	SubscriberNumber  int64     `json:"subscriberNumber"`
	PayerNumber       string    `json:"payerNumber" description:"The payer's number at Bankgirot (betalarnummer): by default the subscriber number."`
	ClearingNumber    string    `json:"clearingNumber"`
	BankAccountNumber string    `json:"bankAccountNumber"`
	PayerID           string    `json:"payerId" description:"Personnummer (YYYYMMDDNNNN) or 00 and the organisationsnummer."`
	InternetBank      bool      `json:"internetBank" description:"The payer asked for the mandate in their internet bank (TK52); the export approves it."`
	Status            string    `json:"status" enum:"Created,Sent,Active,Rejected,Cancelled"`
	StatusCode        string    `json:"statusCode" description:"Bankgirot's information and comment codes of the last mandate advice (e.g. 04/32 active, 04/23 wrong account number, 46/02 cancelled by the payer), empty before any."`
	CancelledBy       string    `json:"cancelledBy" enum:",Merchant,Payer,Bankgirot"`
	CancelPending     bool      `json:"cancelPending" description:"A cancellation (TK03) waits for the next export."`
	SentFileID        *string   `json:"sentFileId"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
	released          bool
}

// AutogiroTransaction is a debit (TK82) or refund (TK32) of a mandate.
type AutogiroTransaction struct {
	ID            string  `json:"id"`
	MandateID     string  `json:"mandateId"`
	AccountID     string  `json:"accountId"`
	Kind          string  `json:"kind" enum:"Debit,Refund"`
	AmountMinor   int64   `json:"-"`
	PaymentDate   string  `json:"paymentDate" format:"date"`
	Reference     string  `json:"reference"`
	InvoiceID     *string `json:"invoiceId"`
	Status        string  `json:"status" enum:"Created,Sent,Completed,Failed,Cancelled"`
	StatusCode    string  `json:"statusCode" description:"Bankgirot's code for the last change: payment status (1 insufficient funds, 2 no Autogiro link), rejection comment code, or cancellation comment code."`
	IsCancelled   bool    `json:"isCancelled"`
	CancelPending bool    `json:"cancelPending" description:"A cancellation (TK25) waits for the next export."`
	PaymentID     *string `json:"paymentId" description:"The Kadens payment a completed or failed debit of an invoice became."`
	SentFileID    *string `json:"sentFileId"`
	// A completed debit the payer's bank paid back (TK77).
	PayerRefundDate *string   `json:"payerRefundDate" format:"date" description:"The day the payer's bank paid this completed debit back (TK77 in a payment specification); null if it did not."`
	PayerRefundCode string    `json:"payerRefundCode" description:"Bankgirot's refund code of that payback: 01 no mandate was given, 02 the mandate was revoked, 03 the amount was more than the payer could expect; empty if none."`
	RefundChargeID  *string   `json:"refundChargeId" description:"The charge that put the paid-back amount on the subscriber's account again (a debit of an invoice only); null until booked."`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// AutogiroExportFile is a submission file written for Bankgirot.
type AutogiroExportFile struct {
	ID             string
	OrganizationID string
	FileName       string
	Size           int64  // bytes; the content is read with CopyExportFile
	Counts         string // JSON object: record kind → count
	DebitTotal     int64
	RefundTotal    int64
	CreatedAt      time.Time
}

// ItemSourceRefund is the source kind of the charge that bills a debit the
// payer's bank paid back (BookRefunds): account_items.source_kind, with
// the transaction's id as source_id, named back by
// autogiro_transactions.refund_item_id.
const ItemSourceRefund = "AutogiroRefund"

// The ledger check (`kadens ledger check`) checks those charges against
// the transactions that name them, as it checks the store's own documents.
func init() {
	ledger.RegisterItemSource(ledger.ItemSource{Kind: ItemSourceRefund, Table: "autogiro_transactions",
		Column: "refund_item_id", Amount: "amount", ItemKind: billing.ItemCharge})
}
