package avtalegiro

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// AvtaleGiro's records (docs/AVTALEGIRO.md), as sql.go, sql_settle.go,
// sql_files.go and files.go read and write them in the tables of
// migrations 00022, 00034, 00040 and 00042. internal/api shows the
// accounts, mandates, claims and files as they are: the names are kept
// from when they were store types (/openapi.json names AvtaleGiroFile's
// schema after the type, the others' through internal/api/openapi.go's
// map).

// Claim statuses.
const (
	ClaimScheduled           = "Scheduled"
	ClaimSent                = "Sent"
	ClaimCancellationPending = "CancellationPending"
	ClaimCancelled           = "Cancelled"
	ClaimPaid                = "Paid"
)

// AvtaleGiroAccount is a payee's account at the bank with its AvtaleGiro
// agreement: the KID rules the bank was given, the data sender id, the
// lead time and where the bank-side interface answers.
type AvtaleGiroAccount struct {
	ID                      string    `json:"id"`
	Name                    string    `json:"name"`
	BankAccountNumber       string    `json:"bankAccountNumber" example:"12345678903" description:"The assignment account (kontonummer): 11 digits."`
	CustomerUnitID          string    `json:"customerUnitId" example:"12345678" description:"The data sender id (KUNDEENHET-ID) the bank gave the payee: 8 digits."`
	KIDAlgorithm            string    `json:"kidAlgorithm" enum:"MOD10,MOD11"`
	KIDLength               int       `json:"kidLength" description:"Length of the account's KIDs, check digit included."`
	LeadDays                int       `json:"leadDays" description:"Norwegian banking days a claim file must reach the bank before the earliest due date in it."`
	BaseComboAPIEndpointURL string    `json:"baseComboApiEndpointUrl" description:"Where the bank-side interface answers: claim files are submitted there, mandate and OCR files fetched."`
	OrganizationIDs         []string  `json:"organizationIds" description:"The organizations that collect on the account."`
	CreatedAt               time.Time `json:"createdAt"`
	UpdatedAt               time.Time `json:"updatedAt"`
}

// AvtaleGiroMandate is a payer's standing consent (fast betalingsoppdrag)
// on an account, known by its KID.
type AvtaleGiroMandate struct {
	ID           string          `json:"id"`
	AccountID    string          `json:"accountId"`
	KID          string          `json:"kid"`
	SubscriberID *string         `json:"subscriberId"`
	Notify       bool            `json:"notify" description:"The payer wants notice from the bank before each claim (claims go as transaction type 21 with notice lines); else the payee notifies (type 02)."`
	AmountLimit  *catalog.Amount `json:"amountLimit" description:"The most one claim may be, in NOK; null is no limit."`
	Source       string          `json:"source" enum:"Api,Bank" description:"Registered through the API or read from the bank's mandate file."`
	Status       string          `json:"status" enum:"Active,Deleted"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	DeletedAt    *time.Time      `json:"deletedAt,omitempty"`

	amountLimit *int64
}

// AmountLimitOre returns the mandate's limit in øre, or nil.
func (m AvtaleGiroMandate) AmountLimitOre() *int64 { return m.amountLimit }

// AvtaleGiroClaim is a claim on a mandate.
type AvtaleGiroClaim struct {
	ID                 string         `json:"id"`
	AccountID          string         `json:"accountId"`
	MandateID          string         `json:"mandateId"`
	TransactionID      string         `json:"transactionId" description:"The caller's id of the collection; creating a claim with a transactionId that exists returns that claim."`
	InvoiceID          *string        `json:"invoiceId" description:"The invoice the claim collects, when billing created it."`
	KID                string         `json:"kid"`
	Amount             catalog.Amount `json:"amount" description:"NOK."`
	DueDate            string         `json:"dueDate" format:"date"`
	Notify             bool           `json:"notify" description:"Sent with notice from the bank (type 21)."`
	ExternalReference  string         `json:"externalReference"`
	NoticeLines        []string       `json:"noticeLines"`
	Status             string         `json:"status" enum:"Scheduled,Sent,CancellationPending,Cancelled,Paid"`
	ClaimFileID        *string        `json:"claimFileId"`
	CancellationFileID *string        `json:"cancellationFileId"`
	PaymentID          *string        `json:"paymentId"`
	CreatedAt          time.Time      `json:"createdAt"`
	UpdatedAt          time.Time      `json:"updatedAt"`
	AmountOre          int64          `json:"-"`
	ShortName          string         `json:"-"`
}

// AvtaleGiroFile is a file exchanged with the bank.
type AvtaleGiroFile struct {
	ID                 string     `json:"id"`
	AccountID          *string    `json:"accountId"`
	Direction          string     `json:"direction" enum:"Out,In"`
	Kind               string     `json:"kind" enum:"Claims,Mandates,Payments"`
	TransmissionNumber string     `json:"transmissionNumber"`
	SHA256             string     `json:"sha256"`
	Transactions       int        `json:"transactions"`
	CreatedAt          time.Time  `json:"createdAt"`
	SubmittedAt        *time.Time `json:"submittedAt"`
}

// nokAmount is an amount in øre as the API shows it (NOK).
func nokAmount(n int64) catalog.Amount {
	nok, _ := money.LookupCurrency("NOK")
	return catalog.NewAmount(n, nok)
}

func avgTenant(ctx context.Context) (string, error) { return tenancy.From(ctx) }

// AvtaleGiroPayment is an OCR giro payment read from the bank, to settle.
type AvtaleGiroPayment struct {
	ID, FileID, AccountID, Reference, KID, PaidOn string
	Amount                                        int64
}

// The small helpers the wing's SQL shares.

func scanID(r store.Scanner) (string, error) {
	var id string
	return id, r.Scan(&id)
}

func fromNullTime(nt sql.NullTime) *time.Time {
	if !nt.Valid {
		return nil
	}
	t := nt.Time.UTC()
	return &t
}

// placeholders is "$from, $from+1, …", n of them, for an IN list.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

// forShare is appended to a read that must hold its row against a
// concurrent change until the transaction commits (PostgreSQL; SQLite's
// one writer does it already), as the store's own reads of a live
// agreement do.
func forShare(tx *store.Tx) string {
	if tx.Engine() == store.Postgres {
		return ` FOR SHARE`
	}
	return ``
}
