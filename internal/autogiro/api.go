package autogiro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// The Autogiro operations of the contract (docs/AUTOGIRO.md): accounts,
// mandates, transactions, submission files and report import.

// AutogiroAccountCreate is the body of POST /autogiro/account.
type AutogiroAccountCreate struct {
	OrganizationID *string `json:"organizationId" required:"true" format:"uuid" description:"The organization (payee) the account collects for."`
	AutogiroAccountUpdate
}

// AutogiroAccountUpdate is the body of PUT /autogiro/account/{id}.
type AutogiroAccountUpdate struct {
	BankgiroCustomerNumber *string `json:"bankgiroCustomerNumber" required:"true" example:"543210" description:"The payee's customer number at Bankgirot (kundnummer): 1 to 6 digits."`
	BankgiroNumber         *string `json:"bankgiroNumber" required:"true" example:"5432-1096" description:"The payee's bankgiro number, 7 or 8 digits with a Luhn check digit; the hyphen is optional. Cannot change once mandates were sent under it."`
	Name                   *string `json:"name" maxLength:"200" example:"Nordavis AB Autogiro"`
}

type autogiroAccountUpdate struct {
	apikit.IDParam
	AutogiroAccountUpdate
}

// AutogiroAccountView is an Autogiro account.
type AutogiroAccountView struct {
	ID                     string    `json:"id"`
	OrganizationID         string    `json:"organizationId"`
	BankgiroCustomerNumber string    `json:"bankgiroCustomerNumber"`
	BankgiroNumber         string    `json:"bankgiroNumber" description:"Digits only."`
	Name                   string    `json:"name"`
	CreatedAt              time.Time `json:"createdAt"`
	UpdatedAt              time.Time `json:"updatedAt"`
}

func accountView(a AutogiroAccount) AutogiroAccountView { return AutogiroAccountView(a) }

type autogiroAccountListParams struct {
	apikit.ListParams
	OrganizationID         string `query:"OrganizationId" format:"uuid" description:"Only accounts of this organization (404 when there is none)."`
	BankgiroCustomerNumber string `query:"BankgiroCustomerNumber" description:"Only accounts with this customer number."`
	BankgiroNumber         string `query:"BankgiroNumber" description:"Only the account with this bankgiro number (hyphen optional)."`
}

// AutogiroMandateCreate is the body of POST /autogiro/mandate.
type AutogiroMandateCreate struct {
	AccountID         *string `json:"accountId" required:"true" format:"uuid" description:"The Autogiro account (payee bankgiro) the mandate is for."`
	SubscriberID      *string `json:"subscriberId" required:"true" format:"uuid" description:"The payer."`
	PayerNumber       *string `json:"payerNumber" example:"1001" description:"The payer's number at Bankgirot (betalarnummer), 1 to 16 digits, unique among the account's live mandates. Default: the subscriber number."`
	ClearingNumber    *string `json:"clearingNumber" required:"true" example:"3300" description:"Clearing number of the payer's bank: 4 digits (Swedbank 8xxx-x: 5)."`
	BankAccountNumber *string `json:"bankAccountNumber" required:"true" example:"121212-1212" description:"Account number, checked with the rule of the clearing number's bank (MOD10 or MOD11)."`
	PayerID           *string `json:"payerId" required:"true" example:"19121212-1212" description:"The account holder's personnummer with century (YYYYMMDD-NNNN) or organisationsnummer (NNNNNN-NNNN); Luhn-checked."`
}

// AutogiroMandateView is a mandate.
type AutogiroMandateView struct {
	ID                string    `json:"id"`
	AccountID         string    `json:"accountId"`
	SubscriberID      string    `json:"subscriberId"`
	SubscriberNumber  int64     `json:"subscriberNumber"`
	PayerNumber       string    `json:"payerNumber"`
	ClearingNumber    string    `json:"clearingNumber"`
	BankAccountNumber string    `json:"bankAccountNumber"`
	PayerID           string    `json:"payerId" description:"Personnummer (YYYYMMDDNNNN) or 00 and the organisationsnummer."`
	InternetBank      bool      `json:"internetBank" description:"Requested by the payer in their internet bank; the next export approves it."`
	Status            string    `json:"status" enum:"Created,Sent,Active,Rejected,Cancelled" description:"Created: waits for the next export. Sent: in a file, waiting for Bankgirot's mandate advice. Active: confirmed (04/32). Rejected: refused by Bankgirot (statusCode says why). Cancelled: by the merchant (DELETE), the payer or Bankgirot (cancelledBy)."`
	StatusCode        string    `json:"statusCode" description:"Information and comment code of the last mandate advice, e.g. 04/32 (active), 04/23 (wrong account number), 46/02 (cancelled by the payer)."`
	CancelledBy       string    `json:"cancelledBy" description:"Merchant, Payer or Bankgirot once cancelled or rejected; empty before."`
	CancelPending     bool      `json:"cancelPending" description:"A cancellation (TK03) waits for the next export."`
	SentFileID        *string   `json:"sentFileId" description:"The export file the mandate went out in."`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

func mandateView(m AutogiroMandate) AutogiroMandateView {
	return AutogiroMandateView{ID: m.ID, AccountID: m.AccountID, SubscriberID: m.SubscriberID, SubscriberNumber: m.SubscriberNumber,
		PayerNumber: m.PayerNumber, ClearingNumber: m.ClearingNumber, BankAccountNumber: m.BankAccountNumber, PayerID: m.PayerID,
		InternetBank: m.InternetBank, Status: m.Status, StatusCode: m.StatusCode, CancelledBy: m.CancelledBy,
		CancelPending: m.CancelPending, SentFileID: m.SentFileID, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

type autogiroMandateListParams struct {
	apikit.ListParams
	AccountID         string `query:"AccountId" format:"uuid" description:"Only mandates of this account (404 when there is none)."`
	SubscriberID      string `query:"SubscriberId" format:"uuid" description:"Only mandates of this subscriber (404 when there is none)."`
	BankAccountNumber string `query:"BankAccountNumber" description:"Only mandates on this account number (as stored: digits, without the clearing number)."`
	SubscriberNumber  *int64 `query:"SubscriberNumber" description:"Only mandates of the subscriber with this number (404 when there is none)."`
	IncludeCancelled  *bool  `query:"IncludeCancelled" description:"List cancelled mandates too (default false)."`
	IncludeRejected   *bool  `query:"IncludeRejected" description:"List rejected mandates too (default false)."`
}

// TransactionCreate is the body of POST /autogiro/transaction.
type TransactionCreate struct {
	MandateID   *string     `json:"mandateId" required:"true" format:"uuid"`
	Kind        *string     `json:"kind" enum:"Debit,Refund" description:"Debit (TK82, collect from the payer; default) or Refund (TK32, pay to the payer)."`
	Amount      json.Number `json:"amount" required:"true" example:"249.00" description:"In SEK, more than 0, at most 2 decimals and 9 999 999 999.99."`
	PaymentDate *string     `json:"paymentDate" required:"true" format:"date" example:"2026-12-01" description:"The day to collect or pay; a day that is not a Swedish banking day is moved to the next one by Bankgirot. If it is closer than the lead time when exported, the export moves it to the first possible day."`
	Reference   *string     `json:"reference" maxLength:"16" example:"INV-2026-000123" description:"Up to 16 characters (ISO-8859-1) shown to the payer and used to match Bankgirot's reports."`
	InvoiceID   *string     `json:"invoiceId" format:"uuid" description:"The invoice a debit pays: its completion records a payment on it."`
}

// TransactionView is an Autogiro transaction.
type TransactionView struct {
	ID            string         `json:"id"`
	MandateID     string         `json:"mandateId"`
	AccountID     string         `json:"accountId"`
	Kind          string         `json:"kind" enum:"Debit,Refund"`
	Amount        catalog.Amount `json:"amount"`
	Currency      string         `json:"currency" example:"SEK"`
	PaymentDate   string         `json:"paymentDate" format:"date"`
	Reference     string         `json:"reference"`
	InvoiceID     *string        `json:"invoiceId"`
	Status        string         `json:"status" enum:"Created,Sent,Completed,Failed,Cancelled" description:"Created: waits for the next export (and for its mandate to be active). Sent: in a file. Completed or Failed: as Bankgirot's reports said. Cancelled: by DELETE, a credited invoice, or the mandate's end."`
	StatusCode    string         `json:"statusCode" description:"Bankgirot's code for the last change (payment status, rejection or cancellation comment code)."`
	IsCancelled   bool           `json:"isCancelled"`
	CancelPending bool           `json:"cancelPending" description:"A cancellation (TK25) waits for the next export."`
	PaymentID     *string        `json:"paymentId" description:"The Kadens payment the report result of an invoice's debit became."`
	SentFileID    *string        `json:"sentFileId"`
	// A completed debit the payer's bank paid back (TK77).
	PayerRefundDate *string   `json:"payerRefundDate" format:"date" description:"The day the payer's bank paid this completed debit back (TK77 in a payment specification); null if it did not. The debit stays Completed."`
	PayerRefundCode string    `json:"payerRefundCode" description:"Bankgirot's refund code of that payback: 01 no mandate was given, 02 the mandate was revoked, 03 more than the payer could expect; empty if none."`
	RefundChargeID  *string   `json:"refundChargeId" description:"The charge on the subscriber's account that bills the paid-back amount again (debits of invoices only); null until booked."`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

var sek, _ = money.LookupCurrency("SEK")

func transactionView(t AutogiroTransaction) TransactionView {
	return TransactionView{ID: t.ID, MandateID: t.MandateID, AccountID: t.AccountID, Kind: t.Kind,
		Amount: catalog.NewAmount(t.AmountMinor, sek), Currency: "SEK", PaymentDate: t.PaymentDate, Reference: t.Reference,
		InvoiceID: t.InvoiceID, Status: t.Status, StatusCode: t.StatusCode, IsCancelled: t.IsCancelled,
		CancelPending: t.CancelPending, PaymentID: t.PaymentID, SentFileID: t.SentFileID,
		PayerRefundDate: t.PayerRefundDate, PayerRefundCode: t.PayerRefundCode, RefundChargeID: t.RefundChargeID,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

type autogiroTransactionListParams struct {
	apikit.ListParams
	MandateID   string `query:"MandateId" format:"uuid" description:"Only transactions of this mandate (404 when there is none)."`
	IsCancelled *bool  `query:"IsCancelled" description:"true: only cancelled transactions; false: only the others; left out: all."`
}

// AutogiroExportFileView describes a written submission file.
type AutogiroExportFileView struct {
	ID             string         `json:"id"`
	OrganizationID string         `json:"organizationId"`
	FileName       string         `json:"fileName" example:"BFEP.IAGAG.K0543210.D261123.T101500"`
	Counts         Counts         `json:"counts"`
	Records        int            `json:"records" description:"Records in the file, opening records (TK01) included."`
	TotalAmount    catalog.Amount `json:"totalAmount" description:"Debits in the file, SEK."`
	RefundAmount   catalog.Amount `json:"refundAmount" description:"Refunds (payouts) in the file, SEK."`
	Bytes          int            `json:"bytes"`
	CreatedAt      time.Time      `json:"createdAt"`
}

type organizationIDParam struct {
	OrganizationID string `path:"organizationId" format:"uuid"`
}

type fileIDParam struct {
	FileID string `path:"fileId" format:"uuid"`
}

// autogiroImportLimit bounds a report file: a payment specification of a
// million payments is 82 MB. The file is streamed, not held.
const autogiroImportLimit = 256 << 20

// handlers serve the Autogiro operations with what the API lends them.
type handlers struct{ env apikit.Env }

// Routes are the Autogiro operations of the main API, served and
// documented by package api.
func Routes(env apikit.Env) []apikit.Route {
	s := handlers{env}
	const tag = "Autogiro"
	var routes []apikit.Route
	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/autogiro/account", ID: "createAutogiroAccount", Tag: tag,
		Summary: "Create an Autogiro account (a payee bankgiro of an organization)", Request: new(AutogiroAccountCreate),
		Responses: []apikit.Response{apikit.Created}, Handle: s.createAutogiroAccount})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/account", ID: "listAutogiroAccounts", Tag: tag,
		Summary: "List Autogiro accounts", Request: new(autogiroAccountListParams),
		Responses: []apikit.Response{apikit.List(new([]AutogiroAccountView)), apikit.NotFound}, Handle: s.listAutogiroAccounts})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/account/{id}", ID: "getAutogiroAccount", Tag: tag,
		Summary: "Get an Autogiro account", Request: new(apikit.IDParam),
		Responses: []apikit.Response{apikit.OK(new(AutogiroAccountView)), apikit.NotFound},
		Handle: apikit.GetOne(func(ctx context.Context, id string) (AutogiroAccountView, error) {
			a, err := Account(ctx, s.env.Store, id)
			return accountView(a), err
		})})
	routes = append(routes, apikit.Route{Method: http.MethodPut, Path: "/autogiro/account/{id}", ID: "updateAutogiroAccount", Tag: tag,
		Summary: "Replace an Autogiro account's numbers and name", Request: new(autogiroAccountUpdate),
		Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.updateAutogiroAccount})
	routes = append(routes, apikit.Route{Method: http.MethodDelete, Path: "/autogiro/account/{id}", ID: "deleteAutogiroAccount", Tag: tag,
		Summary: "Delete an Autogiro account", Desc: "Refused (400) while it has mandates that are not cancelled or rejected, or cancellations not yet exported.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteAutogiroAccount})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/autogiro/export/mandate/{organizationId}", ID: "exportAutogiro", Tag: tag,
		Summary: "Write the submission file to Bankgirot with everything pending for the organization",
		Desc: "One file for all the organization's Autogiro accounts: per bankgiro a mandate section (new mandates TK04, " +
			"cancellations TK03), a payment section (debits TK82 and refunds TK32 of active mandates) and an amendment section " +
			"(cancellations of sent payments, TK25), each with its own TK01; ISO-8859-1, CRLF, 80 characters per record. What " +
			"the file holds is marked sent in the same transaction that stores it, so nothing is exported twice. Nothing " +
			"pending, or no such organization, is a 400 saying so. Fetch the bytes at /autogiro/export/file/{fileId}.",
		Request:   new(organizationIDParam),
		Responses: []apikit.Response{apikit.OK(new(AutogiroExportFileView))}, Handle: s.exportAutogiro})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/export/file/{fileId}", ID: "getAutogiroExportFile", Tag: tag,
		Summary: "Download a submission file", Desc: "The bytes as written (ISO-8859-1), with Bankgirot's dataset name in Content-Disposition.",
		Request: new(fileIDParam),
		Responses: []apikit.Response{apikit.Response{Status: http.StatusOK, ContentType: apikit.MediaOctet, Desc: "The file.",
			Headers: map[string]string{"Content-Disposition": "attachment; filename=BFEP.IAGAG.K0nnnnnn.Dyymmdd.Thhmmss"}}, apikit.NotFound},
		Handle: s.getAutogiroExportFile})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/autogiro/mandate", ID: "createAutogiroMandate", Tag: tag,
		Summary: "Create an Autogiro mandate", Desc: "Mandates are required for recurring payments. The mandate goes to " +
			"Bankgirot in the next export and is Active once Bankgirot's mandate advice confirms it.",
		Request: new(AutogiroMandateCreate), Responses: []apikit.Response{apikit.Created}, Handle: s.createAutogiroMandate})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/mandate", ID: "listAutogiroMandates", Tag: tag,
		Summary: "List Autogiro mandates", Desc: "Cancelled and rejected mandates are listed only with IncludeCancelled and IncludeRejected.",
		Request:   new(autogiroMandateListParams),
		Responses: []apikit.Response{apikit.List(new([]AutogiroMandateView)), apikit.NotFound}, Handle: s.listAutogiroMandates})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/mandate/{id}", ID: "getAutogiroMandate", Tag: tag,
		Summary: "Get an Autogiro mandate", Request: new(apikit.IDParam),
		Responses: []apikit.Response{apikit.OK(new(AutogiroMandateView)), apikit.NotFound},
		Handle: apikit.GetOne(func(ctx context.Context, id string) (AutogiroMandateView, error) {
			m, err := Mandate(ctx, s.env.Store, id)
			return mandateView(m), err
		})})
	routes = append(routes, apikit.Route{Method: http.MethodDelete, Path: "/autogiro/mandate/{id}", ID: "deleteAutogiroMandate", Tag: tag,
		Summary: "Cancel an Autogiro mandate",
		Desc: "A mandate Bankgirot knows gets a cancellation (TK03) in the next export; one never sent is just cancelled. Its " +
			"transactions not completed are cancelled (Bankgirot cancels sent ones with the mandate), and its Autogiro payment " +
			"agreements are deleted, moving their subscriptions to the Invoice agreement. Cancelling a cancelled or rejected mandate does nothing.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteAutogiroMandate})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/autogiro/transaction", ID: "createAutogiroTransaction", Tag: tag,
		Summary: "Create an Autogiro transaction (a debit or a refund)", Request: new(TransactionCreate),
		Responses: []apikit.Response{apikit.Created}, Handle: s.createAutogiroTransaction})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/transaction", ID: "listAutogiroTransactions", Tag: tag,
		Summary: "List Autogiro transactions", Request: new(autogiroTransactionListParams),
		Responses: []apikit.Response{apikit.List(new([]TransactionView)), apikit.NotFound}, Handle: s.listAutogiroTransactions})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/autogiro/transaction/{id}", ID: "getAutogiroTransaction", Tag: tag,
		Summary: "Get an Autogiro transaction", Request: new(apikit.IDParam),
		Responses: []apikit.Response{apikit.OK(new(TransactionView)), apikit.NotFound},
		Handle: apikit.GetOne(func(ctx context.Context, id string) (TransactionView, error) {
			t, err := Transaction(ctx, s.env.Store, id)
			return transactionView(t), err
		})})
	routes = append(routes, apikit.Route{Method: http.MethodDelete, Path: "/autogiro/transaction/{id}", ID: "deleteAutogiroTransaction", Tag: tag,
		Summary: "Cancel an Autogiro transaction",
		Desc: "One not yet sent never goes out; a sent one is cancelled at Bankgirot by a TK25 in the next export. A completed " +
			"or failed transaction is settled: 400 saying so. Cancelling a cancelled transaction does nothing.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteAutogiroTransaction})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/autogiro/import", ID: "importAutogiroReport", Tag: tag,
		Summary: "Import a report file from Bankgirot",
		Desc: "The raw file as the body (new layout; ISO-8859-1; CRLF or LF; trailing blanks may be stripped): mandate advice " +
			"(AG-MEDAVI), payment specification (BET. SPEC & STOPP TK), rejected payments (AVVISADE BET UPPDR), cancellations " +
			"and changes (MAKULERING/ÄNDRING) or internet-bank mandates (AG-EMEDGIV). Applied atomically: a malformed file is a " +
			"400 naming the line and changes nothing. The same file again changes nothing (alreadyImported). Completed debits " +
			"of invoices become payments that settle them; failed ones become failed payments.",
		RawBody: apikit.MediaOctet, MaxBody: autogiroImportLimit, Responses: []apikit.Response{apikit.OK(new(ImportResult))},
		Handle: s.importAutogiro})
	return routes
}

func accountInput(errs *validation.Errors, in AutogiroAccountUpdate) AutogiroAccount {
	var a AutogiroAccount
	if v := apikit.Trimmed(in.BankgiroCustomerNumber); v == "" {
		errs.Add("bankgiroCustomerNumber", "is required")
	} else if c, err := CustomerNumber(v); err != nil {
		errs.Add("bankgiroCustomerNumber", "%q %s", v, err)
	} else {
		a.BankgiroCustomerNumber = strings.TrimLeft(c, "0")
	}
	if v := apikit.Trimmed(in.BankgiroNumber); v == "" {
		errs.Add("bankgiroNumber", "is required")
	} else if bg, err := Bankgiro(v); err != nil {
		errs.Add("bankgiroNumber", "%q %s", v, err)
	} else {
		a.BankgiroNumber = bg
	}
	a.Name = apikit.Text(errs, "name", in.Name, 200, false)
	return a
}

func (s handlers) createAutogiroAccount(w http.ResponseWriter, r *http.Request) error {
	var in AutogiroAccountCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	org := apikit.Trimmed(in.OrganizationID)
	if org == "" {
		errs.Add("organizationId", "is required")
	} else if org = strings.ToLower(org); !store.ValidID(org) {
		errs.Add("organizationId", "must be a uuid")
	}
	a := accountInput(&errs, in.AutogiroAccountUpdate)
	if err := errs.Err(); err != nil {
		return err
	}
	a.OrganizationID = org
	a, err := CreateAccount(r.Context(), s.env.Store, a, s.env.Now())
	if err != nil {
		return err
	}
	s.env.Created(w, "/autogiro/account/"+a.ID, a.ID)
	return nil
}

func (s handlers) listAutogiroAccounts(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := AutogiroAccountFilter{OrganizationID: apikit.QueryID(q, "OrganizationId", &errs),
		CustomerNumber: strings.TrimLeft(strings.TrimSpace(q.Get("BankgiroCustomerNumber")), "0")}
	if v := strings.TrimSpace(q.Get("BankgiroNumber")); v != "" {
		f.BankgiroNumber = strings.NewReplacer("-", "", " ", "").Replace(v)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := ListAccounts(r.Context(), s.env.Store, f, p)
	if err != nil {
		return err
	}
	out := make([]AutogiroAccountView, len(list))
	for i, a := range list {
		out[i] = accountView(a)
	}
	s.env.WriteList(w, r, out, next)
	return nil
}

func (s handlers) updateAutogiroAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in AutogiroAccountUpdate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	a := accountInput(&errs, in)
	if err := errs.Err(); err != nil {
		return err
	}
	a.ID = id
	if err := UpdateAccount(r.Context(), s.env.Store, a, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) deleteAutogiroAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := DeleteAccount(r.Context(), s.env.Store, id, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) createAutogiroMandate(w http.ResponseWriter, r *http.Request) error {
	var in AutogiroMandateCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var (
		errs validation.Errors
		m    AutogiroMandate
	)
	requiredID := func(name string, p *string) string {
		v := strings.ToLower(apikit.Trimmed(p))
		switch {
		case v == "":
			errs.Add(name, "is required")
		case !store.ValidID(v):
			errs.Add(name, "must be a uuid")
		}
		return v
	}
	m.AccountID = requiredID("accountId", in.AccountID)
	m.SubscriberID = requiredID("subscriberId", in.SubscriberID)
	if v := apikit.Trimmed(in.PayerNumber); v != "" {
		n := strings.TrimLeft(v, "0")
		if len(v) > 16 || strings.Trim(v, "0123456789") != "" || n == "" {
			errs.Add("payerNumber", "%q must be 1 to 16 digits, not all zeros", v)
		}
		m.PayerNumber = n
	}
	clearing, account := apikit.Trimmed(in.ClearingNumber), apikit.Trimmed(in.BankAccountNumber)
	switch {
	case clearing == "":
		errs.Add("clearingNumber", "is required")
	case account == "":
		errs.Add("bankAccountNumber", "is required")
	default:
		ba, err := ParseBankAccount(clearing, account)
		var ae *AccountError
		switch {
		case errors.As(err, &ae) && ae.Field == "clearingNumber":
			errs.Add("clearingNumber", "%q: %s", clearing, ae.Reason)
		case errors.As(err, &ae):
			errs.Add("bankAccountNumber", "%q: %s", account, ae.Reason)
		}
		m.ClearingNumber, m.BankAccountNumber = ba.Clearing, ba.Number
	}
	if v := apikit.Trimmed(in.PayerID); v == "" {
		errs.Add("payerId", "is required")
	} else if id, err := PayerID(v); err != nil {
		errs.Add("payerId", "%q %s", v, err)
	} else {
		m.PayerID = id
	}
	if err := errs.Err(); err != nil {
		return err
	}
	m, err := CreateMandate(r.Context(), s.env.Store, m, s.env.Now())
	if err != nil {
		return err
	}
	s.env.Created(w, "/autogiro/mandate/"+m.ID, m.ID)
	return nil
}

func (s handlers) listAutogiroMandates(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := AutogiroMandateFilter{AccountID: apikit.QueryID(q, "AccountId", &errs), SubscriberID: apikit.QueryID(q, "SubscriberId", &errs),
		BankAccountNumber: strings.TrimLeft(strings.NewReplacer("-", "", " ", "", ".", "").Replace(q.Get("BankAccountNumber")), "0")}
	if v := strings.TrimSpace(q.Get("SubscriberNumber")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs.Add("SubscriberNumber", "must be an integer")
		}
		f.SubscriberNumber = &n
	}
	if b := apikit.QueryBool(q, "IncludeCancelled", &errs); b != nil {
		f.IncludeCancelled = *b
	}
	if b := apikit.QueryBool(q, "IncludeRejected", &errs); b != nil {
		f.IncludeRejected = *b
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := ListMandates(r.Context(), s.env.Store, f, p)
	if err != nil {
		return err
	}
	out := make([]AutogiroMandateView, len(list))
	for i, m := range list {
		out[i] = mandateView(m)
	}
	s.env.WriteList(w, r, out, next)
	return nil
}

func (s handlers) deleteAutogiroMandate(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if err := CancelMandate(r.Context(), s.env.Store, id, now); err != nil {
		return err
	}
	tenant, err := tenancy.From(r.Context())
	if err != nil {
		return err
	}
	if err := MandateEnded(r.Context(), s.env.Store, tenant, id, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) createAutogiroTransaction(w http.ResponseWriter, r *http.Request) error {
	var in TransactionCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	var (
		errs validation.Errors
		t    AutogiroTransaction
	)
	t.MandateID = strings.ToLower(apikit.Trimmed(in.MandateID))
	switch {
	case t.MandateID == "":
		errs.Add("mandateId", "is required")
	case !store.ValidID(t.MandateID):
		errs.Add("mandateId", "must be a uuid")
	}
	t.Kind = apikit.OneOf(&errs, "kind", in.Kind, AutogiroDebit, AutogiroDebit, AutogiroRefund)
	if in.Amount == "" {
		errs.Add("amount", "is required")
	} else if minor, err := money.ParseMinor(string(in.Amount), sek); err != nil {
		errs.Add("amount", "%s", err)
	} else if minor <= 0 || minor > 999_999_999_999 {
		errs.Add("amount", "must be more than 0 and at most 9999999999.99 (12 digits in öre)")
	} else {
		t.AmountMinor = minor
	}
	if v := apikit.Trimmed(in.PaymentDate); v == "" {
		errs.Add("paymentDate", "is required")
	} else if d, err := time.Parse(time.DateOnly, v); err != nil {
		errs.Add("paymentDate", "%q is not a date YYYY-MM-DD", v)
	} else if today := Today(now); d.Before(today) || d.After(today.AddDate(1, 0, 0)) {
		errs.Add("paymentDate", "%s must be from today (%s, Swedish time) to a year ahead", v, today.Format(time.DateOnly))
	} else {
		t.PaymentDate = v
	}
	if in.Reference != nil {
		t.Reference = strings.TrimSpace(*in.Reference)
		if err := Reference(t.Reference); err != nil {
			errs.Add("reference", "%s", err)
		}
	}
	if v := strings.ToLower(apikit.Trimmed(in.InvoiceID)); v != "" {
		if !store.ValidID(v) {
			errs.Add("invoiceId", "must be a uuid")
		}
		t.InvoiceID = &v
	}
	if err := errs.Err(); err != nil {
		return err
	}
	t, err = CreateTransaction(r.Context(), s.env.Store, t, s.env.Now())
	if errors.Is(err, ErrAutogiroInvoiceDebited) {
		return validation.Field("invoiceId", "invoice %s has a live Autogiro debit already: transaction %s", *in.InvoiceID, t.ID)
	}
	if err != nil {
		return err
	}
	s.env.Created(w, "/autogiro/transaction/"+t.ID, t.ID)
	return nil
}

func (s handlers) listAutogiroTransactions(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := AutogiroTransactionFilter{MandateID: apikit.QueryID(q, "MandateId", &errs), IsCancelled: apikit.QueryBool(q, "IsCancelled", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := ListTransactions(r.Context(), s.env.Store, f, p)
	if err != nil {
		return err
	}
	out := make([]TransactionView, len(list))
	for i, t := range list {
		out[i] = transactionView(t)
	}
	s.env.WriteList(w, r, out, next)
	return nil
}

func (s handlers) deleteAutogiroTransaction(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := CancelTransaction(r.Context(), s.env.Store, id, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ExportFileView describes a stored export file.
func ExportFileView(f ExportFile) AutogiroExportFileView {
	return AutogiroExportFileView{ID: f.ID, OrganizationID: f.OrganizationID, FileName: f.FileName, Counts: f.Counts,
		Records: int(f.Size) / (RecordLen + 2), TotalAmount: catalog.NewAmount(f.DebitTotal, sek), RefundAmount: catalog.NewAmount(f.RefundTotal, sek),
		Bytes: int(f.Size), CreatedAt: f.CreatedAt}
}

func (s handlers) exportAutogiro(w http.ResponseWriter, r *http.Request) error {
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	f, err := Export(r.Context(), s.env.Store, org, now, nil)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, ExportFileView(f))
	return nil
}

func (s handlers) getAutogiroExportFile(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "fileId")
	if err != nil {
		return err
	}
	f, err := StoredExportFile(r.Context(), s.env.Store, id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", apikit.MediaOctet)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.FileName}))
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.WriteHeader(http.StatusOK)
	// Chunk by chunk from the store: a 100,000-payment file (8 MB) is
	// never in memory whole.
	if err := CopyExportFile(r.Context(), s.env.Store, id, w); err != nil {
		return fmt.Errorf("api: write autogiro file: %w", err)
	}
	return nil
}

func (s handlers) importAutogiro(w http.ResponseWriter, r *http.Request) error {
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	res, err := Import(r.Context(), s.env.Store, r.Body, now)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, res)
	return nil
}
