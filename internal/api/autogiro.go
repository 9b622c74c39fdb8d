package api

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

	"github.com/kadens/kadens/internal/autogiro"
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
	idParam
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

func accountView(a autogiro.AutogiroAccount) AutogiroAccountView { return AutogiroAccountView(a) }

type autogiroAccountListParams struct {
	ListParams
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

func mandateView(m autogiro.AutogiroMandate) AutogiroMandateView {
	return AutogiroMandateView{ID: m.ID, AccountID: m.AccountID, SubscriberID: m.SubscriberID, SubscriberNumber: m.SubscriberNumber,
		PayerNumber: m.PayerNumber, ClearingNumber: m.ClearingNumber, BankAccountNumber: m.BankAccountNumber, PayerID: m.PayerID,
		InternetBank: m.InternetBank, Status: m.Status, StatusCode: m.StatusCode, CancelledBy: m.CancelledBy,
		CancelPending: m.CancelPending, SentFileID: m.SentFileID, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

type autogiroMandateListParams struct {
	ListParams
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

func transactionView(t autogiro.AutogiroTransaction) TransactionView {
	return TransactionView{ID: t.ID, MandateID: t.MandateID, AccountID: t.AccountID, Kind: t.Kind,
		Amount: catalog.NewAmount(t.AmountMinor, sek), Currency: "SEK", PaymentDate: t.PaymentDate, Reference: t.Reference,
		InvoiceID: t.InvoiceID, Status: t.Status, StatusCode: t.StatusCode, IsCancelled: t.IsCancelled,
		CancelPending: t.CancelPending, PaymentID: t.PaymentID, SentFileID: t.SentFileID,
		PayerRefundDate: t.PayerRefundDate, PayerRefundCode: t.PayerRefundCode, RefundChargeID: t.RefundChargeID,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

type autogiroTransactionListParams struct {
	ListParams
	MandateID   string `query:"MandateId" format:"uuid" description:"Only transactions of this mandate (404 when there is none)."`
	IsCancelled *bool  `query:"IsCancelled" description:"true: only cancelled transactions; false: only the others; left out: all."`
}

// AutogiroExportFileView describes a written submission file.
type AutogiroExportFileView struct {
	ID             string          `json:"id"`
	OrganizationID string          `json:"organizationId"`
	FileName       string          `json:"fileName" example:"BFEP.IAGAG.K0543210.D261123.T101500"`
	Counts         autogiro.Counts `json:"counts"`
	Records        int             `json:"records" description:"Records in the file, opening records (TK01) included."`
	TotalAmount    catalog.Amount  `json:"totalAmount" description:"Debits in the file, SEK."`
	RefundAmount   catalog.Amount  `json:"refundAmount" description:"Refunds (payouts) in the file, SEK."`
	Bytes          int             `json:"bytes"`
	CreatedAt      time.Time       `json:"createdAt"`
}

type organizationIDParam struct {
	OrganizationID string `path:"organizationId" format:"uuid"`
}

type fileIDParam struct {
	FileID string `path:"fileId" format:"uuid"`
}

const mediaOctet = "application/octet-stream"

// autogiroImportLimit bounds a report file: a payment specification of a
// million payments is 82 MB. The file is streamed, not held.
const autogiroImportLimit = 256 << 20

func (s *Server) autogiroRoutes() {
	const tag = "Autogiro"
	s.add(route{method: http.MethodPost, path: "/autogiro/account", id: "createAutogiroAccount", tag: tag,
		summary: "Create an Autogiro account (a payee bankgiro of an organization)", request: new(AutogiroAccountCreate),
		responses: common(respCreated), handle: s.createAutogiroAccount})
	s.add(route{method: http.MethodGet, path: "/autogiro/account", id: "listAutogiroAccounts", tag: tag,
		summary: "List Autogiro accounts", request: new(autogiroAccountListParams),
		responses: common(respList(new([]AutogiroAccountView)), respNotFound), handle: s.listAutogiroAccounts})
	s.add(route{method: http.MethodGet, path: "/autogiro/account/{id}", id: "getAutogiroAccount", tag: tag,
		summary: "Get an Autogiro account", request: new(idParam),
		responses: common(response{status: http.StatusOK, body: new(AutogiroAccountView)}, respNotFound),
		handle: getOne(func(ctx context.Context, id string) (AutogiroAccountView, error) {
			a, err := autogiro.Account(ctx, s.store, id)
			return accountView(a), err
		})})
	s.add(route{method: http.MethodPut, path: "/autogiro/account/{id}", id: "updateAutogiroAccount", tag: tag,
		summary: "Replace an Autogiro account's numbers and name", request: new(autogiroAccountUpdate),
		responses: common(respNoContent, respNotFound), handle: s.updateAutogiroAccount})
	s.add(route{method: http.MethodDelete, path: "/autogiro/account/{id}", id: "deleteAutogiroAccount", tag: tag,
		summary: "Delete an Autogiro account", desc: "Refused (400) while it has mandates that are not cancelled or rejected, or cancellations not yet exported.",
		request: new(idParam), responses: common(respNoContent, respNotFound), handle: s.deleteAutogiroAccount})

	s.add(route{method: http.MethodPost, path: "/autogiro/export/mandate/{organizationId}", id: "exportAutogiro", tag: tag,
		summary: "Write the submission file to Bankgirot with everything pending for the organization",
		desc: "One file for all the organization's Autogiro accounts: per bankgiro a mandate section (new mandates TK04, " +
			"cancellations TK03), a payment section (debits TK82 and refunds TK32 of active mandates) and an amendment section " +
			"(cancellations of sent payments, TK25), each with its own TK01; ISO-8859-1, CRLF, 80 characters per record. What " +
			"the file holds is marked sent in the same transaction that stores it, so nothing is exported twice. Nothing " +
			"pending, or no such organization, is a 400 saying so. Fetch the bytes at /autogiro/export/file/{fileId}.",
		request:   new(organizationIDParam),
		responses: common(response{status: http.StatusOK, body: new(AutogiroExportFileView)}), handle: s.exportAutogiro})
	s.add(route{method: http.MethodGet, path: "/autogiro/export/file/{fileId}", id: "getAutogiroExportFile", tag: tag,
		summary: "Download a submission file", desc: "The bytes as written (ISO-8859-1), with Bankgirot's dataset name in Content-Disposition.",
		request: new(fileIDParam),
		responses: common(response{status: http.StatusOK, contentType: mediaOctet, desc: "The file.",
			headers: map[string]string{"Content-Disposition": "attachment; filename=BFEP.IAGAG.K0nnnnnn.Dyymmdd.Thhmmss"}}, respNotFound),
		handle: s.getAutogiroExportFile})

	s.add(route{method: http.MethodPost, path: "/autogiro/mandate", id: "createAutogiroMandate", tag: tag,
		summary: "Create an Autogiro mandate", desc: "Mandates are required for recurring payments. The mandate goes to " +
			"Bankgirot in the next export and is Active once Bankgirot's mandate advice confirms it.",
		request: new(AutogiroMandateCreate), responses: common(respCreated), handle: s.createAutogiroMandate})
	s.add(route{method: http.MethodGet, path: "/autogiro/mandate", id: "listAutogiroMandates", tag: tag,
		summary: "List Autogiro mandates", desc: "Cancelled and rejected mandates are listed only with IncludeCancelled and IncludeRejected.",
		request:   new(autogiroMandateListParams),
		responses: common(respList(new([]AutogiroMandateView)), respNotFound), handle: s.listAutogiroMandates})
	s.add(route{method: http.MethodGet, path: "/autogiro/mandate/{id}", id: "getAutogiroMandate", tag: tag,
		summary: "Get an Autogiro mandate", request: new(idParam),
		responses: common(response{status: http.StatusOK, body: new(AutogiroMandateView)}, respNotFound),
		handle: getOne(func(ctx context.Context, id string) (AutogiroMandateView, error) {
			m, err := autogiro.Mandate(ctx, s.store, id)
			return mandateView(m), err
		})})
	s.add(route{method: http.MethodDelete, path: "/autogiro/mandate/{id}", id: "deleteAutogiroMandate", tag: tag,
		summary: "Cancel an Autogiro mandate",
		desc: "A mandate Bankgirot knows gets a cancellation (TK03) in the next export; one never sent is just cancelled. Its " +
			"transactions not completed are cancelled (Bankgirot cancels sent ones with the mandate), and its Autogiro payment " +
			"agreements are deleted, moving their subscriptions to the Invoice agreement. Cancelling a cancelled or rejected mandate does nothing.",
		request: new(idParam), responses: common(respNoContent, respNotFound), handle: s.deleteAutogiroMandate})

	s.add(route{method: http.MethodPost, path: "/autogiro/transaction", id: "createAutogiroTransaction", tag: tag,
		summary: "Create an Autogiro transaction (a debit or a refund)", request: new(TransactionCreate),
		responses: common(respCreated), handle: s.createAutogiroTransaction})
	s.add(route{method: http.MethodGet, path: "/autogiro/transaction", id: "listAutogiroTransactions", tag: tag,
		summary: "List Autogiro transactions", request: new(autogiroTransactionListParams),
		responses: common(respList(new([]TransactionView)), respNotFound), handle: s.listAutogiroTransactions})
	s.add(route{method: http.MethodGet, path: "/autogiro/transaction/{id}", id: "getAutogiroTransaction", tag: tag,
		summary: "Get an Autogiro transaction", request: new(idParam),
		responses: common(response{status: http.StatusOK, body: new(TransactionView)}, respNotFound),
		handle: getOne(func(ctx context.Context, id string) (TransactionView, error) {
			t, err := autogiro.Transaction(ctx, s.store, id)
			return transactionView(t), err
		})})
	s.add(route{method: http.MethodDelete, path: "/autogiro/transaction/{id}", id: "deleteAutogiroTransaction", tag: tag,
		summary: "Cancel an Autogiro transaction",
		desc: "One not yet sent never goes out; a sent one is cancelled at Bankgirot by a TK25 in the next export. A completed " +
			"or failed transaction is settled: 400 saying so. Cancelling a cancelled transaction does nothing.",
		request: new(idParam), responses: common(respNoContent, respNotFound), handle: s.deleteAutogiroTransaction})

	s.add(route{method: http.MethodPost, path: "/autogiro/import", id: "importAutogiroReport", tag: tag,
		summary: "Import a report file from Bankgirot",
		desc: "The raw file as the body (new layout; ISO-8859-1; CRLF or LF; trailing blanks may be stripped): mandate advice " +
			"(AG-MEDAVI), payment specification (BET. SPEC & STOPP TK), rejected payments (AVVISADE BET UPPDR), cancellations " +
			"and changes (MAKULERING/ÄNDRING) or internet-bank mandates (AG-EMEDGIV). Applied atomically: a malformed file is a " +
			"400 naming the line and changes nothing. The same file again changes nothing (alreadyImported). Completed debits " +
			"of invoices become payments that settle them; failed ones become failed payments.",
		rawBody: mediaOctet, maxBody: autogiroImportLimit, responses: common(response{status: http.StatusOK, body: new(autogiro.ImportResult)}),
		handle: s.importAutogiro})
}

func (s *Server) accountInput(errs *validation.Errors, in AutogiroAccountUpdate) autogiro.AutogiroAccount {
	var a autogiro.AutogiroAccount
	if v := trimmed(in.BankgiroCustomerNumber); v == "" {
		errs.Add("bankgiroCustomerNumber", "is required")
	} else if c, err := autogiro.CustomerNumber(v); err != nil {
		errs.Add("bankgiroCustomerNumber", "%q %s", v, err)
	} else {
		a.BankgiroCustomerNumber = strings.TrimLeft(c, "0")
	}
	if v := trimmed(in.BankgiroNumber); v == "" {
		errs.Add("bankgiroNumber", "is required")
	} else if bg, err := autogiro.Bankgiro(v); err != nil {
		errs.Add("bankgiroNumber", "%q %s", v, err)
	} else {
		a.BankgiroNumber = bg
	}
	a.Name = text(errs, "name", in.Name, 200, false)
	return a
}

func (s *Server) createAutogiroAccount(w http.ResponseWriter, r *http.Request) error {
	var in AutogiroAccountCreate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	org := trimmed(in.OrganizationID)
	if org == "" {
		errs.Add("organizationId", "is required")
	} else if org = strings.ToLower(org); !store.ValidID(org) {
		errs.Add("organizationId", "must be a uuid")
	}
	a := s.accountInput(&errs, in.AutogiroAccountUpdate)
	if err := errs.Err(); err != nil {
		return err
	}
	a.OrganizationID = org
	a, err := autogiro.CreateAccount(r.Context(), s.store, a, s.now())
	if err != nil {
		return err
	}
	s.created(w, "/autogiro/account/"+a.ID, a.ID)
	return nil
}

func (s *Server) listAutogiroAccounts(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := autogiro.AutogiroAccountFilter{OrganizationID: queryID(q, "OrganizationId", &errs),
		CustomerNumber: strings.TrimLeft(strings.TrimSpace(q.Get("BankgiroCustomerNumber")), "0")}
	if v := strings.TrimSpace(q.Get("BankgiroNumber")); v != "" {
		f.BankgiroNumber = strings.NewReplacer("-", "", " ", "").Replace(v)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := autogiro.ListAccounts(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	out := make([]AutogiroAccountView, len(list))
	for i, a := range list {
		out[i] = accountView(a)
	}
	s.writeList(w, r, out, next)
	return nil
}

func (s *Server) updateAutogiroAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in AutogiroAccountUpdate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	a := s.accountInput(&errs, in)
	if err := errs.Err(); err != nil {
		return err
	}
	a.ID = id
	if err := autogiro.UpdateAccount(r.Context(), s.store, a, s.now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteAutogiroAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := autogiro.DeleteAccount(r.Context(), s.store, id, s.now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) createAutogiroMandate(w http.ResponseWriter, r *http.Request) error {
	var in AutogiroMandateCreate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var (
		errs validation.Errors
		m    autogiro.AutogiroMandate
	)
	uuidField := func(name string, p *string) string {
		v := strings.ToLower(trimmed(p))
		switch {
		case v == "":
			errs.Add(name, "is required")
		case !store.ValidID(v):
			errs.Add(name, "must be a uuid")
		}
		return v
	}
	m.AccountID = uuidField("accountId", in.AccountID)
	m.SubscriberID = uuidField("subscriberId", in.SubscriberID)
	if v := trimmed(in.PayerNumber); v != "" {
		n := strings.TrimLeft(v, "0")
		if len(v) > 16 || strings.Trim(v, "0123456789") != "" || n == "" {
			errs.Add("payerNumber", "%q must be 1 to 16 digits, not all zeros", v)
		}
		m.PayerNumber = n
	}
	clearing, account := trimmed(in.ClearingNumber), trimmed(in.BankAccountNumber)
	switch {
	case clearing == "":
		errs.Add("clearingNumber", "is required")
	case account == "":
		errs.Add("bankAccountNumber", "is required")
	default:
		ba, err := autogiro.ParseBankAccount(clearing, account)
		var ae *autogiro.AccountError
		switch {
		case errors.As(err, &ae) && ae.Field == "clearingNumber":
			errs.Add("clearingNumber", "%q: %s", clearing, ae.Reason)
		case errors.As(err, &ae):
			errs.Add("bankAccountNumber", "%q: %s", account, ae.Reason)
		}
		m.ClearingNumber, m.BankAccountNumber = ba.Clearing, ba.Number
	}
	if v := trimmed(in.PayerID); v == "" {
		errs.Add("payerId", "is required")
	} else if id, err := autogiro.PayerID(v); err != nil {
		errs.Add("payerId", "%q %s", v, err)
	} else {
		m.PayerID = id
	}
	if err := errs.Err(); err != nil {
		return err
	}
	m, err := autogiro.CreateMandate(r.Context(), s.store, m, s.now())
	if err != nil {
		return err
	}
	s.created(w, "/autogiro/mandate/"+m.ID, m.ID)
	return nil
}

func (s *Server) listAutogiroMandates(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := autogiro.AutogiroMandateFilter{AccountID: queryID(q, "AccountId", &errs), SubscriberID: queryID(q, "SubscriberId", &errs),
		BankAccountNumber: strings.TrimLeft(strings.NewReplacer("-", "", " ", "", ".", "").Replace(q.Get("BankAccountNumber")), "0")}
	if v := strings.TrimSpace(q.Get("SubscriberNumber")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs.Add("SubscriberNumber", "must be an integer")
		}
		f.SubscriberNumber = &n
	}
	if b := queryBool(q, "IncludeCancelled", &errs); b != nil {
		f.IncludeCancelled = *b
	}
	if b := queryBool(q, "IncludeRejected", &errs); b != nil {
		f.IncludeRejected = *b
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := autogiro.ListMandates(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	out := make([]AutogiroMandateView, len(list))
	for i, m := range list {
		out[i] = mandateView(m)
	}
	s.writeList(w, r, out, next)
	return nil
}

func (s *Server) deleteAutogiroMandate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	if err := autogiro.CancelMandate(r.Context(), s.store, id, now); err != nil {
		return err
	}
	tenant, err := tenancy.From(r.Context())
	if err != nil {
		return err
	}
	if err := autogiro.MandateEnded(r.Context(), s.store, tenant, id, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) createAutogiroTransaction(w http.ResponseWriter, r *http.Request) error {
	var in TransactionCreate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var (
		errs validation.Errors
		t    autogiro.AutogiroTransaction
	)
	t.MandateID = strings.ToLower(trimmed(in.MandateID))
	switch {
	case t.MandateID == "":
		errs.Add("mandateId", "is required")
	case !store.ValidID(t.MandateID):
		errs.Add("mandateId", "must be a uuid")
	}
	t.Kind = oneOf(&errs, "kind", in.Kind, autogiro.AutogiroDebit, autogiro.AutogiroDebit, autogiro.AutogiroRefund)
	if in.Amount == "" {
		errs.Add("amount", "is required")
	} else if minor, err := money.ParseMinor(string(in.Amount), sek); err != nil {
		errs.Add("amount", "%s", err)
	} else if minor <= 0 || minor > 999_999_999_999 {
		errs.Add("amount", "must be more than 0 and at most 9999999999.99 (12 digits in öre)")
	} else {
		t.AmountMinor = minor
	}
	if v := trimmed(in.PaymentDate); v == "" {
		errs.Add("paymentDate", "is required")
	} else if d, err := time.Parse(time.DateOnly, v); err != nil {
		errs.Add("paymentDate", "%q is not a date YYYY-MM-DD", v)
	} else if today := autogiro.Today(now); d.Before(today) || d.After(today.AddDate(1, 0, 0)) {
		errs.Add("paymentDate", "%s must be from today (%s, Swedish time) to a year ahead", v, today.Format(time.DateOnly))
	} else {
		t.PaymentDate = v
	}
	if in.Reference != nil {
		t.Reference = strings.TrimSpace(*in.Reference)
		if err := autogiro.Reference(t.Reference); err != nil {
			errs.Add("reference", "%s", err)
		}
	}
	if v := strings.ToLower(trimmed(in.InvoiceID)); v != "" {
		if !store.ValidID(v) {
			errs.Add("invoiceId", "must be a uuid")
		}
		t.InvoiceID = &v
	}
	if err := errs.Err(); err != nil {
		return err
	}
	t, err = autogiro.CreateTransaction(r.Context(), s.store, t, s.now())
	if errors.Is(err, autogiro.ErrAutogiroInvoiceDebited) {
		return validation.Field("invoiceId", "invoice %s has a live Autogiro debit already: transaction %s", *in.InvoiceID, t.ID)
	}
	if err != nil {
		return err
	}
	s.created(w, "/autogiro/transaction/"+t.ID, t.ID)
	return nil
}

func (s *Server) listAutogiroTransactions(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := autogiro.AutogiroTransactionFilter{MandateID: queryID(q, "MandateId", &errs), IsCancelled: queryBool(q, "IsCancelled", &errs)}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := autogiro.ListTransactions(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	out := make([]TransactionView, len(list))
	for i, t := range list {
		out[i] = transactionView(t)
	}
	s.writeList(w, r, out, next)
	return nil
}

func (s *Server) deleteAutogiroTransaction(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := autogiro.CancelTransaction(r.Context(), s.store, id, s.now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ExportFileView describes a stored export file.
func ExportFileView(f autogiro.ExportFile) AutogiroExportFileView {
	return AutogiroExportFileView{ID: f.ID, OrganizationID: f.OrganizationID, FileName: f.FileName, Counts: f.Counts,
		Records: int(f.Size) / (autogiro.RecordLen + 2), TotalAmount: catalog.NewAmount(f.DebitTotal, sek), RefundAmount: catalog.NewAmount(f.RefundTotal, sek),
		Bytes: int(f.Size), CreatedAt: f.CreatedAt}
}

func (s *Server) exportAutogiro(w http.ResponseWriter, r *http.Request) error {
	org, err := pathID(r, "organizationId")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	f, err := autogiro.Export(r.Context(), s.store, org, now, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ExportFileView(f))
	return nil
}

func (s *Server) getAutogiroExportFile(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "fileId")
	if err != nil {
		return err
	}
	f, err := autogiro.StoredExportFile(r.Context(), s.store, id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", mediaOctet)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.FileName}))
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.WriteHeader(http.StatusOK)
	// Chunk by chunk from the store: a 100,000-payment file (8 MB) is
	// never in memory whole.
	if err := autogiro.CopyExportFile(r.Context(), s.store, id, w); err != nil {
		return fmt.Errorf("api: write autogiro file: %w", err)
	}
	return nil
}

func (s *Server) importAutogiro(w http.ResponseWriter, r *http.Request) error {
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	res, err := autogiro.Import(r.Context(), s.store, r.Body, now)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
