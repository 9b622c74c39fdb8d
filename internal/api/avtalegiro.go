package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/bankaccount"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// AccountCreate is the body of POST /avtalegiro/account.
type AccountCreate struct {
	Name                    *string `json:"name" description:"A name for people."`
	BankAccountNumber       *string `json:"bankAccountNumber" required:"true" example:"12345678903" description:"The assignment account: a Norwegian kontonummer (11 digits, MOD11); dots and spaces are ignored."`
	CustomerUnitID          *string `json:"customerUnitId" required:"true" example:"12345678" description:"The data sender id the bank gave the payee: 8 digits."`
	KIDAlgorithm            *string `json:"kidAlgorithm" required:"true" enum:"MOD10,MOD11" description:"The check digit method agreed with the bank (case-insensitive)."`
	KIDLength               *int    `json:"kidLength" required:"true" minimum:"2" maximum:"25" description:"The length of the account's KIDs, check digit included."`
	LeadDays                *int    `json:"leadDays" minimum:"0" maximum:"30" default:"4" description:"Norwegian banking days a claim must reach the bank before its due date."`
	BaseComboAPIEndpointURL *string `json:"baseComboApiEndpointUrl" required:"true" format:"uri" description:"The bank-side interface: http or https."`
}

// AccountUpdate is the body of PUT /avtalegiro/account/{id}: every setting.
type AccountUpdate struct {
	idParam
	AccountCreate
}

// AccountOrganization names an organization that collects on an account.
type AccountOrganization struct {
	ID *string `json:"id" required:"true" format:"uuid" description:"The organization's id."`
}

// okBody documents a 200 answer with body.
func okBody(body any) response { return response{status: http.StatusOK, body: body} }

type accountOrganizationParams struct {
	idParam
	OrganizationID string `path:"organizationId" format:"uuid"`
}

type agAccountListParams struct {
	ListParams
	BankAccountNumber       string `query:"BankAccountNumber" description:"Only the account with this number (kontonummer, 11 digits)."`
	BaseComboAPIEndpointURL string `query:"BaseComboApiEndpointURL" description:"Only accounts whose bank-side interface is at this URL."`
}

// AvtaleGiroMandateCreate is the body of POST /avtalegiro/mandate.
type AvtaleGiroMandateCreate struct {
	AccountID    *string `json:"accountId" required:"true" format:"uuid"`
	KID          *string `json:"kid" required:"true" description:"The payer's KID, valid for the account (length and check digit)."`
	SubscriberID *string `json:"subscriberId" format:"uuid" description:"The subscriber who pays by this mandate."`
	Notify       *bool   `json:"notify" description:"The payer wants notice from the bank before each claim (default false: the payee notifies)."`
	AmountLimit  *number `json:"amountLimit" description:"The most one claim may be, in NOK; left out: no limit." example:"5000.00"`
}

type mandateListParams struct {
	ListParams
	AccountID      string `query:"AccountId" format:"uuid" description:"Only mandates on this account (404 if there is no such account)."`
	SubscriberID   string `query:"SubscriberId" format:"uuid" description:"Only mandates of this subscriber (404 if there is no such subscriber)."`
	KID            string `query:"KID" description:"Only mandates with this KID."`
	IncludeDeleted bool   `query:"IncludeDeleted" description:"Include deleted mandates."`
}

// ClaimCreate is the body of POST /avtalegiro/claim.
type ClaimCreate struct {
	MandateID         *string  `json:"mandateId" required:"true" format:"uuid"`
	Amount            *number  `json:"amount" required:"true" example:"299.00" description:"NOK, more than 0, within the mandate's limit."`
	DueDate           *string  `json:"dueDate" required:"true" format:"date" description:"Not in the past, at least the account's lead time (Norwegian banking days) ahead, at most 12 months ahead."`
	KID               *string  `json:"kid" description:"The claim's KID; left out, the mandate's."`
	TransactionID     *string  `json:"transactionId" format:"uuid" description:"Your id of this collection; a second create with it returns the first claim (200). Generated when left out."`
	ExternalReference *string  `json:"externalReference" description:"Shown on the payer's statement: up to 25 characters."`
	NoticeLines       []string `json:"noticeLines" description:"The bank's notice text, up to 42 lines of 80 characters; only for mandates whose payer wants notice from the bank."`
}

type claimListParams struct {
	ListParams
	MandateID     string `query:"MandateId" format:"uuid" description:"Only claims on this mandate (404 if there is no such mandate)."`
	TransactionID string `query:"TransactionId" format:"uuid" description:"Only the claim with this transaction id."`
	KID           string `query:"KID" description:"Only claims with this KID."`
}

// avtalegiroImportLimit bounds a file sent raw to POST /avtalegiro/import:
// an OCR file of 1,000,000 payments is about 160 MB. The raw file is
// streamed into the import, not held; the JSON form (base64) keeps the
// API's usual body limit.
const avtalegiroImportLimit = 256 << 20

// AvtaleGiroImportInput is the JSON body of POST /avtalegiro/import.
type AvtaleGiroImportInput struct {
	Content *string `json:"content" required:"true" format:"byte" description:"The file from the bank (mandate notifications or OCR giro payments), base64 of its ISO-8859-1 bytes."`
}

// AvtaleGiroImportResult answers an import.
type AvtaleGiroImportResult struct {
	avtalegiro.AvtaleGiroImport
	Settled  int `json:"settled" description:"OCR payments recorded as payments (settling invoices by KID)."`
	Problems int `json:"problems" description:"OCR payments that matched no claim or invoice; kept with the reason."`
}

func (s *Server) avtalegiroRoutes() {
	const tag = "AvtaleGiro"
	s.add(route{method: http.MethodPost, path: "/avtalegiro/account", id: "createAvtaleGiroAccount", tag: tag,
		summary: "Create an AvtaleGiro account", request: new(AccountCreate), responses: common(respCreated), handle: s.createAGAccount})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/account", id: "listAvtaleGiroAccounts", tag: tag,
		summary: "List AvtaleGiro accounts", request: new(agAccountListParams),
		responses: common(respList(new([]avtalegiro.AvtaleGiroAccount)), respNotFound), handle: s.listAGAccounts})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/account/{id}", id: "getAvtaleGiroAccount", tag: tag,
		summary: "Get an AvtaleGiro account", request: new(idParam),
		responses: common(okBody(new(avtalegiro.AvtaleGiroAccount)), respNotFound), handle: getOne(func(ctx context.Context, id string) (avtalegiro.AvtaleGiroAccount, error) {
			return avtalegiro.Account(ctx, s.store, id)
		})})
	s.add(route{method: http.MethodPut, path: "/avtalegiro/account/{id}", id: "updateAvtaleGiroAccount", tag: tag,
		summary: "Replace an AvtaleGiro account's settings", request: new(AccountUpdate),
		responses: common(respNoContent, respNotFound), handle: s.updateAGAccount})
	s.add(route{method: http.MethodDelete, path: "/avtalegiro/account/{id}", id: "deleteAvtaleGiroAccount", tag: tag,
		summary: "Delete an AvtaleGiro account", desc: "Refused (400) while the account has active mandates or claims to collect.",
		request: new(idParam), responses: common(respNoContent, respNotFound), handle: s.deleteAGAccount})
	s.add(route{method: http.MethodPost, path: "/avtalegiro/account/{id}/organizations", id: "addAvtaleGiroAccountOrganizations", tag: tag,
		summary: "Let organizations collect on an AvtaleGiro account", desc: "The body is an array of {id}; linking one twice changes nothing.",
		request: new([]AccountOrganization), params: new(idParam), responses: common(response{status: http.StatusCreated, body: "",
			desc: "Linked; the body is the account's id.", headers: map[string]string{"Location": "The account."}}, respNotFound),
		handle: s.addAGOrganizations})
	s.add(route{method: http.MethodDelete, path: "/avtalegiro/account/{id}/organizations/{organizationId}", id: "removeAvtaleGiroAccountOrganization",
		tag: tag, summary: "Stop an organization collecting on an AvtaleGiro account", request: new(accountOrganizationParams),
		responses: common(respNoContent, respNotFound), handle: s.removeAGOrganization})

	s.add(route{method: http.MethodPost, path: "/avtalegiro/mandate", id: "createAvtaleGiroMandate", tag: tag,
		summary: "Register an AvtaleGiro mandate", desc: "Mandates the payer's bank reports arrive by import; this registers one known otherwise.",
		request: new(AvtaleGiroMandateCreate), responses: common(respCreated), handle: s.createAGMandate})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/mandate", id: "listAvtaleGiroMandates", tag: tag,
		summary: "List AvtaleGiro mandates", request: new(mandateListParams),
		responses: common(respList(new([]avtalegiro.AvtaleGiroMandate)), respNotFound), handle: s.listAGMandates})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/mandate/{id}", id: "getAvtaleGiroMandate", tag: tag,
		summary: "Get an AvtaleGiro mandate", request: new(idParam),
		responses: common(okBody(new(avtalegiro.AvtaleGiroMandate)), respNotFound), handle: getOne(func(ctx context.Context, id string) (avtalegiro.AvtaleGiroMandate, error) {
			return avtalegiro.Mandate(ctx, s.store, id)
		})})
	s.add(route{method: http.MethodDelete, path: "/avtalegiro/mandate/{id}", id: "deleteAvtaleGiroMandate", tag: tag,
		summary: "Delete an AvtaleGiro mandate",
		desc: "Its unprocessed claims are cancelled; AvtaleGiro payment agreements on it are deleted and their subscriptions " +
			"go back to Invoice (PaymentAgreementDeleted). Deleting a deleted mandate does nothing.",
		request: new(idParam), responses: common(respNoContent, respNotFound), handle: s.deleteAGMandate})

	s.add(route{method: http.MethodPost, path: "/avtalegiro/claim", id: "createAvtaleGiroClaim", tag: tag,
		summary: "Create a claim for a mandate", desc: "Scheduled until the account's next claim file.",
		request: new(ClaimCreate), responses: common(respCreated, response{status: http.StatusOK, body: "",
			desc: "A claim with this transactionId exists; the body is its id.", headers: map[string]string{"Location": "The claim."}}),
		handle: s.createAGClaim})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/claim", id: "listAvtaleGiroClaims", tag: tag,
		summary: "List claims", request: new(claimListParams),
		responses: common(respList(new([]avtalegiro.AvtaleGiroClaim)), respNotFound), handle: s.listAGClaims})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/claim/{id}", id: "getAvtaleGiroClaim", tag: tag,
		summary: "Get a claim", request: new(idParam),
		responses: common(okBody(new(avtalegiro.AvtaleGiroClaim)), respNotFound), handle: getOne(func(ctx context.Context, id string) (avtalegiro.AvtaleGiroClaim, error) {
			return avtalegiro.Claim(ctx, s.store, id)
		})})
	s.add(route{method: http.MethodPost, path: "/avtalegiro/claim/{id}/cancel", id: "cancelAvtaleGiroClaim", tag: tag,
		summary: "Cancel a claim the bank has not processed",
		desc: "202 while the claim is scheduled and its due date has not come: a claim not yet sent is Cancelled at once, a sent " +
			"one is CancellationPending and goes to the bank as a cancellation in the account's next file (once). 400 saying why " +
			"otherwise (paid, or processed by the bank). Cancelling a cancelled claim is 202 and changes nothing.",
		request: new(idParam), responses: common(response{status: http.StatusAccepted, desc: "Cancellation accepted."}, respNotFound),
		handle: s.cancelAGClaim})

	s.add(route{method: http.MethodPost, path: "/avtalegiro/import", id: "importAvtaleGiroFile", tag: tag,
		summary: "Import a file from the bank",
		desc: "Mandate notifications (new, changed and deleted mandates) or OCR giro payments, which settle invoices by KID. " +
			"The file is the body as it is (application/octet-stream or text/plain; streamed: any size up to 256 MiB) or, " +
			"for small files, base64 in a JSON object. " +
			"All or nothing; the same file again changes nothing. A malformed file is a 400 naming the line and the reason.",
		request: new(AvtaleGiroImportInput), rawBody: mediaOctet, maxBody: avtalegiroImportLimit,
		responses: common(okBody(new(AvtaleGiroImportResult))), handle: s.importAGFile})
	s.add(route{method: http.MethodPost, path: "/avtalegiro/account/{id}/export", id: "exportAvtaleGiroClaims", tag: tag,
		summary: "Write the account's next claim file",
		desc: "Every scheduled claim and pending cancellation of the account, in one OCR giro file with the next transmission " +
			"and assignment numbers; 204 when there is nothing to send. The file is kept (GET /avtalegiro/file/{id}).",
		request: new(idParam), responses: common(okBody(new(avtalegiro.AvtaleGiroFile)), respNoContent, respNotFound), handle: s.exportAGClaims})
	s.add(route{method: http.MethodGet, path: "/avtalegiro/file/{id}", id: "getAvtaleGiroFile", tag: tag,
		summary: "Download a file exchanged with the bank", desc: "The OCR giro file as exchanged: ISO-8859-1, 80-character records.",
		request: new(idParam), responses: common(response{status: http.StatusOK, contentType: "text/plain; charset=iso-8859-1"}, respNotFound),
		handle: s.getAGFile})
}

func (s *Server) accountFromInput(ctx context.Context, in AccountCreate) (avtalegiro.AvtaleGiroAccount, error) {
	var errs validation.Errors
	a := avtalegiro.AvtaleGiroAccount{Name: text(&errs, "name", in.Name, 200, false)}
	if v := trimmed(in.BankAccountNumber); v == "" {
		errs.Add("bankAccountNumber", "is required")
	} else if n, err := bankaccount.ParseKontonummer(v); err != nil {
		errs.Add("bankAccountNumber", "%s", err)
	} else {
		a.BankAccountNumber = n
	}
	a.CustomerUnitID = trimmed(in.CustomerUnitID)
	if len(a.CustomerUnitID) != 8 || strings.Trim(a.CustomerUnitID, "0123456789") != "" {
		errs.Add("customerUnitId", "must be 8 digits")
	}
	if trimmed(in.KIDAlgorithm) == "" {
		errs.Add("kidAlgorithm", "is required")
	} else if alg, ok := billing.ParseKIDAlgorithm(*in.KIDAlgorithm); !ok {
		errs.Add("kidAlgorithm", "must be MOD10 or MOD11")
	} else {
		a.KIDAlgorithm = alg
	}
	switch {
	case in.KIDLength == nil:
		errs.Add("kidLength", "is required")
	case *in.KIDLength < 2 || *in.KIDLength > 25:
		errs.Add("kidLength", "must be 2 to 25")
	default:
		a.KIDLength = *in.KIDLength
	}
	a.LeadDays = avtalegiro.DefaultLeadDays
	if in.LeadDays != nil {
		if *in.LeadDays < 0 || *in.LeadDays > 30 {
			errs.Add("leadDays", "must be 0 to 30")
		}
		a.LeadDays = *in.LeadDays
	}
	a.BaseComboAPIEndpointURL = trimmed(in.BaseComboAPIEndpointURL)
	switch u := a.BaseComboAPIEndpointURL; {
	case u == "":
		errs.Add("baseComboApiEndpointUrl", "is required")
	case len(u) > 2000:
		errs.Add("baseComboApiEndpointUrl", "must be an http or https URL of at most 2000 characters")
	default:
		// A bank whose name does not resolve now (DNS down, not yet
		// published) is no reason to refuse the account: the sync's
		// dialer checks whatever the name resolves to when it is called.
		if err := s.egress.CheckURL(ctx, u); err != nil && !errors.Is(err, egress.ErrUnresolved) {
			errs.Add("baseComboApiEndpointUrl", "%s", err)
		}
	}
	return a, errs.Err()
}

func (s *Server) createAGAccount(w http.ResponseWriter, r *http.Request) error {
	var in AccountCreate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	a, err := s.accountFromInput(r.Context(), in)
	if err != nil {
		return err
	}
	a, err = avtalegiro.CreateAccount(r.Context(), s.store, a, s.now())
	if err != nil {
		return err
	}
	s.created(w, "/avtalegiro/account/"+a.ID, a.ID)
	return nil
}

func (s *Server) listAGAccounts(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := avtalegiro.AvtaleGiroAccountFilter{EndpointURL: strings.TrimSpace(q.Get("BaseComboApiEndpointURL"))}
	if v := strings.TrimSpace(q.Get("BankAccountNumber")); v != "" {
		n, err := bankaccount.ParseKontonummer(v)
		if err != nil {
			errs.Add("BankAccountNumber", "%s", err)
		}
		f.BankAccountNumber = n
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := avtalegiro.ListAccounts(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, list, next)
	return nil
}

func (s *Server) updateAGAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in AccountUpdate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	a, err := s.accountFromInput(r.Context(), in.AccountCreate)
	if err != nil {
		return err
	}
	a.ID = id
	if err := avtalegiro.UpdateAccount(r.Context(), s.store, a, s.now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteAGAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := avtalegiro.DeleteAccount(r.Context(), s.store, id, s.now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) addAGOrganizations(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in []AccountOrganization
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	if len(in) == 0 {
		errs.Add("body", "must list at least one organization")
	}
	ids := make([]string, 0, len(in))
	for i, o := range in {
		v := uuidField(&errs, fmt.Sprintf("[%d].id", i), o.ID)
		if v == "" && trimmed(o.ID) == "" {
			errs.Add(fmt.Sprintf("[%d].id", i), "is required")
		}
		ids = append(ids, v)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := avtalegiro.AddAccountOrganizations(r.Context(), s.store, id, ids, s.now()); err != nil {
		return err
	}
	s.created(w, "/avtalegiro/account/"+id, id)
	return nil
}

func (s *Server) removeAGOrganization(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	org, err := pathID(r, "organizationId")
	if err != nil {
		return err
	}
	if err := avtalegiro.RemoveAccountOrganization(r.Context(), s.store, id, org); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// nokField reads an amount in NOK (øre precision) into øre.
func nokField(errs *validation.Errors, field string, n *number) int64 {
	d, err := n.decimal()
	if err != nil {
		errs.Add(field, "%s", err)
		return 0
	}
	if d.Sign() <= 0 {
		errs.Add(field, "must be more than 0")
		return 0
	}
	nok, _ := money.LookupCurrency("NOK")
	a, err := catalog.ParseAmount(d, nok)
	if err != nil {
		errs.Add(field, "%s", err)
		return 0
	}
	if a.Minor > ocrgiro.MaxAmount {
		errs.Add(field, "is more than the bank's files can carry")
		return 0
	}
	return a.Minor
}

func (s *Server) createAGMandate(w http.ResponseWriter, r *http.Request) error {
	var in AvtaleGiroMandateCreate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	m := avtalegiro.NewAvtaleGiroMandate{AccountID: uuidField(&errs, "accountId", in.AccountID),
		SubscriberID: uuidField(&errs, "subscriberId", in.SubscriberID), KID: trimmed(in.KID), Notify: in.Notify != nil && *in.Notify}
	if m.AccountID == "" && trimmed(in.AccountID) == "" {
		errs.Add("accountId", "is required")
	}
	if m.KID == "" {
		errs.Add("kid", "is required")
	}
	if in.AmountLimit != nil {
		if v := nokField(&errs, "amountLimit", in.AmountLimit); v > 0 {
			m.AmountLimit = &v
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	account, err := avtalegiro.Account(r.Context(), s.store, m.AccountID)
	if err != nil {
		return validation.Field("accountId", "there is no AvtaleGiro account %s", m.AccountID)
	}
	if why := avtalegiro.CheckKID(account, m.KID); why != "" {
		return validation.Field("kid", "%s", why)
	}
	id, err := avtalegiro.CreateMandate(r.Context(), s.store, m, s.now())
	if err != nil {
		return err
	}
	s.created(w, "/avtalegiro/mandate/"+id, id)
	return nil
}

func (s *Server) listAGMandates(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := avtalegiro.AvtaleGiroMandateFilter{AccountID: queryID(q, "AccountId", &errs), SubscriberID: queryID(q, "SubscriberId", &errs),
		KID: strings.TrimSpace(q.Get("KID"))}
	if b := queryBool(q, "IncludeDeleted", &errs); b != nil {
		f.IncludeDeleted = *b
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := avtalegiro.ListMandates(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, list, next)
	return nil
}

func (s *Server) deleteAGMandate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	if _, err := avtalegiro.DeleteMandate(r.Context(), s.store, id, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) createAGClaim(w http.ResponseWriter, r *http.Request) error {
	var in ClaimCreate
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	c := avtalegiro.NewAvtaleGiroClaim{MandateID: uuidField(&errs, "mandateId", in.MandateID),
		TransactionID: uuidField(&errs, "transactionId", in.TransactionID), KID: trimmed(in.KID)}
	if c.MandateID == "" && trimmed(in.MandateID) == "" {
		errs.Add("mandateId", "is required")
	}
	if in.Amount == nil {
		errs.Add("amount", "is required")
	} else {
		c.Amount = nokField(&errs, "amount", in.Amount)
	}
	var due time.Time
	if v := trimmed(in.DueDate); v == "" {
		errs.Add("dueDate", "is required")
	} else if d, err := time.Parse(time.DateOnly, v); err != nil {
		errs.Add("dueDate", "must be a date such as 2027-01-15")
	} else {
		due = d
	}
	c.ExternalReference = text(&errs, "externalReference", in.ExternalReference, 25, false)
	if c.ExternalReference != "" && !ocrgiro.Encodable(c.ExternalReference) {
		errs.Add("externalReference", "must be Latin-1 text (ISO-8859-1): the bank's files carry nothing else")
	}
	if len(in.NoticeLines) > ocrgiro.MaxNoticeLines {
		errs.Add("noticeLines", "must be at most %d lines", ocrgiro.MaxNoticeLines)
	}
	for i, l := range in.NoticeLines {
		f := fmt.Sprintf("noticeLines[%d]", i)
		if len([]rune(l)) > ocrgiro.NoticeLineLen {
			errs.Add(f, "must be at most %d characters", ocrgiro.NoticeLineLen)
		} else if !ocrgiro.Encodable(l) {
			errs.Add(f, "must be Latin-1 text (ISO-8859-1) without control characters")
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	mandate, err := avtalegiro.Mandate(r.Context(), s.store, c.MandateID)
	if err != nil || mandate.DeletedAt != nil {
		return validation.Field("mandateId", "there is no active mandate %s", c.MandateID)
	}
	account, err := avtalegiro.Account(r.Context(), s.store, mandate.AccountID)
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	if c.KID == "" {
		c.KID = mandate.KID
	} else if why := avtalegiro.CheckKID(account, c.KID); why != "" {
		errs.Add("kid", "%s", why)
	}
	if limit := mandate.AmountLimitOre(); limit != nil && c.Amount > *limit {
		errs.Add("amount", "is above the mandate's limit of %s NOK", mandate.AmountLimit.String())
	}
	if why := avtalegiro.CheckDue(due, now, account.LeadDays); why != "" {
		errs.Add("dueDate", "%s", why)
	}
	if len(in.NoticeLines) > 0 && !mandate.Notify {
		errs.Add("noticeLines", "the payer does not want notice from the bank; the claim goes without notice lines")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if c.TransactionID == "" {
		c.TransactionID = store.NewID()
	}
	if mandate.SubscriberID != nil {
		if sub, err := s.app.Subscriber(r.Context(), *mandate.SubscriberID); err == nil {
			c.ShortName = sub.Name
		}
	}
	c.DueDate, c.NoticeLines = due.Format(time.DateOnly), in.NoticeLines
	claim, created, err := avtalegiro.CreateClaim(r.Context(), s.store, c, now)
	if err != nil {
		return err
	}
	if !created {
		w.Header().Set("Location", s.baseURL+"/avtalegiro/claim/"+claim.ID)
		writeJSON(w, http.StatusOK, claim.ID)
		return nil
	}
	s.created(w, "/avtalegiro/claim/"+claim.ID, claim.ID)
	return nil
}

func (s *Server) listAGClaims(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := avtalegiro.AvtaleGiroClaimFilter{MandateID: queryID(q, "MandateId", &errs), TransactionID: queryID(q, "TransactionId", &errs),
		KID: strings.TrimSpace(q.Get("KID"))}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := avtalegiro.ListClaims(r.Context(), s.store, f, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, list, next)
	return nil
}

func (s *Server) cancelAGClaim(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	if _, err := avtalegiro.CancelClaim(r.Context(), s.store, id, avtalegiro.Today(now).Format(time.DateOnly), now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) importAGFile(w http.ResponseWriter, r *http.Request) error {
	var file io.Reader = r.Body
	if media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); media == "application/json" || media == "" {
		if s.limit > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, s.limit)
		}
		var in AvtaleGiroImportInput
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		content, err := base64.StdEncoding.DecodeString(trimmed(in.Content))
		if err != nil || trimmed(in.Content) == "" {
			return validation.Field("content", "must be the file in base64")
		}
		file = bytes.NewReader(content)
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	res, err := avtalegiro.Import(r.Context(), s.store, file, now)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AvtaleGiroImportResult{AvtaleGiroImport: res.Import, Settled: res.Settled, Problems: res.Problems})
	return nil
}

func (s *Server) exportAGClaims(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	f, ok, err := avtalegiro.Export(r.Context(), s.store, id, now)
	if err != nil {
		return err
	}
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

func (s *Server) getAGFile(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := avtalegiro.File(r.Context(), s.store, id); err != nil {
		return err
	}
	// Chunk by chunk from the store to the client: the file is never
	// held whole.
	content := bufio.NewReaderSize(avtalegiro.FileContent(r.Context(), s.store, id), 32<<10)
	if _, err := content.Peek(1); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
	w.WriteHeader(http.StatusOK)
	if _, err := content.WriteTo(w); err != nil {
		// The status is sent: all there is left is to cut the answer short.
		panic(http.ErrAbortHandler)
	}
	return nil
}
