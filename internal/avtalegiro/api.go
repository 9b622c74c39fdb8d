package avtalegiro

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

	"github.com/kadens/kadens/internal/apikit"
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
	apikit.IDParam
	AccountCreate
}

// AccountOrganization names an organization that collects on an account.
type AccountOrganization struct {
	ID *string `json:"id" required:"true" format:"uuid" description:"The organization's id."`
}

type accountOrganizationParams struct {
	apikit.IDParam
	OrganizationID string `path:"organizationId" format:"uuid"`
}

type agAccountListParams struct {
	apikit.ListParams
	BankAccountNumber       string `query:"BankAccountNumber" description:"Only the account with this number (kontonummer, 11 digits)."`
	BaseComboAPIEndpointURL string `query:"BaseComboApiEndpointURL" description:"Only accounts whose bank-side interface is at this URL."`
}

// AvtaleGiroMandateCreate is the body of POST /avtalegiro/mandate.
type AvtaleGiroMandateCreate struct {
	AccountID    *string        `json:"accountId" required:"true" format:"uuid"`
	KID          *string        `json:"kid" required:"true" description:"The payer's KID, valid for the account (length and check digit)."`
	SubscriberID *string        `json:"subscriberId" format:"uuid" description:"The subscriber who pays by this mandate."`
	Notify       *bool          `json:"notify" description:"The payer wants notice from the bank before each claim (default false: the payee notifies)."`
	AmountLimit  *apikit.Number `json:"amountLimit" description:"The most one claim may be, in NOK; left out: no limit." example:"5000.00"`
}

type mandateListParams struct {
	apikit.ListParams
	AccountID      string `query:"AccountId" format:"uuid" description:"Only mandates on this account (404 if there is no such account)."`
	SubscriberID   string `query:"SubscriberId" format:"uuid" description:"Only mandates of this subscriber (404 if there is no such subscriber)."`
	KID            string `query:"KID" description:"Only mandates with this KID."`
	IncludeDeleted bool   `query:"IncludeDeleted" description:"Include deleted mandates."`
}

// ClaimCreate is the body of POST /avtalegiro/claim.
type ClaimCreate struct {
	MandateID         *string        `json:"mandateId" required:"true" format:"uuid"`
	Amount            *apikit.Number `json:"amount" required:"true" example:"299.00" description:"NOK, more than 0, within the mandate's limit."`
	DueDate           *string        `json:"dueDate" required:"true" format:"date" description:"Not in the past, at least the account's lead time (Norwegian banking days) ahead, at most 12 months ahead."`
	KID               *string        `json:"kid" description:"The claim's KID; left out, the mandate's."`
	TransactionID     *string        `json:"transactionId" format:"uuid" description:"Your id of this collection; a second create with it returns the first claim (200). Generated when left out."`
	ExternalReference *string        `json:"externalReference" description:"Shown on the payer's statement: up to 25 characters."`
	NoticeLines       []string       `json:"noticeLines" description:"The bank's notice text, up to 42 lines of 80 characters; only for mandates whose payer wants notice from the bank."`
}

type claimListParams struct {
	apikit.ListParams
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
	AvtaleGiroImport
	Settled  int `json:"settled" description:"OCR payments recorded as payments (settling invoices by KID)."`
	Problems int `json:"problems" description:"OCR payments that matched no claim or invoice; kept with the reason."`
}

// handlers serve the AvtaleGiro operations with what the API lends them.
type handlers struct{ env apikit.Env }

// Routes are the AvtaleGiro operations of the main API, served and
// documented by package api.
func Routes(env apikit.Env) []apikit.Route {
	s := handlers{env}
	const tag = "AvtaleGiro"
	var routes []apikit.Route
	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/account", ID: "createAvtaleGiroAccount", Tag: tag,
		Summary: "Create an AvtaleGiro account", Request: new(AccountCreate), Responses: []apikit.Response{apikit.Created}, Handle: s.createAGAccount})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/account", ID: "listAvtaleGiroAccounts", Tag: tag,
		Summary: "List AvtaleGiro accounts", Request: new(agAccountListParams),
		Responses: []apikit.Response{apikit.List(new([]AvtaleGiroAccount)), apikit.NotFound}, Handle: s.listAGAccounts})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/account/{id}", ID: "getAvtaleGiroAccount", Tag: tag,
		Summary: "Get an AvtaleGiro account", Request: new(apikit.IDParam),
		Responses: []apikit.Response{apikit.OK(new(AvtaleGiroAccount)), apikit.NotFound}, Handle: apikit.GetOne(func(ctx context.Context, id string) (AvtaleGiroAccount, error) {
			return Account(ctx, s.env.Store, id)
		})})
	routes = append(routes, apikit.Route{Method: http.MethodPut, Path: "/avtalegiro/account/{id}", ID: "updateAvtaleGiroAccount", Tag: tag,
		Summary: "Replace an AvtaleGiro account's settings", Request: new(AccountUpdate),
		Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.updateAGAccount})
	routes = append(routes, apikit.Route{Method: http.MethodDelete, Path: "/avtalegiro/account/{id}", ID: "deleteAvtaleGiroAccount", Tag: tag,
		Summary: "Delete an AvtaleGiro account", Desc: "Refused (400) while the account has active mandates or claims to collect.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteAGAccount})
	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/account/{id}/organizations", ID: "addAvtaleGiroAccountOrganizations", Tag: tag,
		Summary: "Let organizations collect on an AvtaleGiro account", Desc: "The body is an array of {id}; linking one twice changes nothing.",
		Request: new([]AccountOrganization), Params: new(apikit.IDParam), Responses: []apikit.Response{apikit.Response{Status: http.StatusCreated, Body: "",
			Desc: "Linked; the body is the account's id.", Headers: map[string]string{"Location": "The account."}}, apikit.NotFound},
		Handle: s.addAGOrganizations})
	routes = append(routes, apikit.Route{Method: http.MethodDelete, Path: "/avtalegiro/account/{id}/organizations/{organizationId}", ID: "removeAvtaleGiroAccountOrganization",
		Tag: tag, Summary: "Stop an organization collecting on an AvtaleGiro account", Request: new(accountOrganizationParams),
		Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.removeAGOrganization})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/mandate", ID: "createAvtaleGiroMandate", Tag: tag,
		Summary: "Register an AvtaleGiro mandate", Desc: "Mandates the payer's bank reports arrive by import; this registers one known otherwise.",
		Request: new(AvtaleGiroMandateCreate), Responses: []apikit.Response{apikit.Created}, Handle: s.createAGMandate})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/mandate", ID: "listAvtaleGiroMandates", Tag: tag,
		Summary: "List AvtaleGiro mandates", Request: new(mandateListParams),
		Responses: []apikit.Response{apikit.List(new([]AvtaleGiroMandate)), apikit.NotFound}, Handle: s.listAGMandates})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/mandate/{id}", ID: "getAvtaleGiroMandate", Tag: tag,
		Summary: "Get an AvtaleGiro mandate", Request: new(apikit.IDParam),
		Responses: []apikit.Response{apikit.OK(new(AvtaleGiroMandate)), apikit.NotFound}, Handle: apikit.GetOne(func(ctx context.Context, id string) (AvtaleGiroMandate, error) {
			return Mandate(ctx, s.env.Store, id)
		})})
	routes = append(routes, apikit.Route{Method: http.MethodDelete, Path: "/avtalegiro/mandate/{id}", ID: "deleteAvtaleGiroMandate", Tag: tag,
		Summary: "Delete an AvtaleGiro mandate",
		Desc: "Its unprocessed claims are cancelled; AvtaleGiro payment agreements on it are deleted and their subscriptions " +
			"go back to Invoice (PaymentAgreementDeleted). Deleting a deleted mandate does nothing.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.NoContent, apikit.NotFound}, Handle: s.deleteAGMandate})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/claim", ID: "createAvtaleGiroClaim", Tag: tag,
		Summary: "Create a claim for a mandate", Desc: "Scheduled until the account's next claim file.",
		Request: new(ClaimCreate), Responses: []apikit.Response{apikit.Created, apikit.Response{Status: http.StatusOK, Body: "",
			Desc: "A claim with this transactionId exists; the body is its id.", Headers: map[string]string{"Location": "The claim."}}},
		Handle: s.createAGClaim})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/claim", ID: "listAvtaleGiroClaims", Tag: tag,
		Summary: "List claims", Request: new(claimListParams),
		Responses: []apikit.Response{apikit.List(new([]AvtaleGiroClaim)), apikit.NotFound}, Handle: s.listAGClaims})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/claim/{id}", ID: "getAvtaleGiroClaim", Tag: tag,
		Summary: "Get a claim", Request: new(apikit.IDParam),
		Responses: []apikit.Response{apikit.OK(new(AvtaleGiroClaim)), apikit.NotFound}, Handle: apikit.GetOne(func(ctx context.Context, id string) (AvtaleGiroClaim, error) {
			return Claim(ctx, s.env.Store, id)
		})})
	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/claim/{id}/cancel", ID: "cancelAvtaleGiroClaim", Tag: tag,
		Summary: "Cancel a claim the bank has not processed",
		Desc: "202 while the claim is scheduled and its due date has not come: a claim not yet sent is Cancelled at once, a sent " +
			"one is CancellationPending and goes to the bank as a cancellation in the account's next file (once). 400 saying why " +
			"otherwise (paid, or processed by the bank). Cancelling a cancelled claim is 202 and changes nothing.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.Response{Status: http.StatusAccepted, Desc: "Cancellation accepted."}, apikit.NotFound},
		Handle: s.cancelAGClaim})

	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/import", ID: "importAvtaleGiroFile", Tag: tag,
		Summary: "Import a file from the bank",
		Desc: "Mandate notifications (new, changed and deleted mandates) or OCR giro payments, which settle invoices by KID. " +
			"The file is the body as it is (application/octet-stream or text/plain; streamed: any size up to 256 MiB) or, " +
			"for small files, base64 in a JSON object. " +
			"All or nothing; the same file again changes nothing. A malformed file is a 400 naming the line and the reason.",
		Request: new(AvtaleGiroImportInput), RawBody: apikit.MediaOctet, MaxBody: avtalegiroImportLimit,
		Responses: []apikit.Response{apikit.OK(new(AvtaleGiroImportResult))}, Handle: s.importAGFile})
	routes = append(routes, apikit.Route{Method: http.MethodPost, Path: "/avtalegiro/account/{id}/export", ID: "exportAvtaleGiroClaims", Tag: tag,
		Summary: "Write the account's next claim file",
		Desc: "Every scheduled claim and pending cancellation of the account, in one OCR giro file with the next transmission " +
			"and assignment numbers; 204 when there is nothing to send. The file is kept (GET /avtalegiro/file/{id}).",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.OK(new(AvtaleGiroFile)), apikit.NoContent, apikit.NotFound}, Handle: s.exportAGClaims})
	routes = append(routes, apikit.Route{Method: http.MethodGet, Path: "/avtalegiro/file/{id}", ID: "getAvtaleGiroFile", Tag: tag,
		Summary: "Download a file exchanged with the bank", Desc: "The OCR giro file as exchanged: ISO-8859-1, 80-character records.",
		Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.Response{Status: http.StatusOK, ContentType: "text/plain; charset=iso-8859-1"}, apikit.NotFound},
		Handle: s.getAGFile})
	return routes
}

func (s handlers) accountFromInput(ctx context.Context, in AccountCreate) (AvtaleGiroAccount, error) {
	var errs validation.Errors
	a := AvtaleGiroAccount{Name: apikit.Text(&errs, "name", in.Name, 200, false)}
	if v := apikit.Trimmed(in.BankAccountNumber); v == "" {
		errs.Add("bankAccountNumber", "is required")
	} else if n, err := bankaccount.ParseKontonummer(v); err != nil {
		errs.Add("bankAccountNumber", "%s", err)
	} else {
		a.BankAccountNumber = n
	}
	a.CustomerUnitID = apikit.Trimmed(in.CustomerUnitID)
	if len(a.CustomerUnitID) != 8 || strings.Trim(a.CustomerUnitID, "0123456789") != "" {
		errs.Add("customerUnitId", "must be 8 digits")
	}
	if apikit.Trimmed(in.KIDAlgorithm) == "" {
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
	a.LeadDays = DefaultLeadDays
	if in.LeadDays != nil {
		if *in.LeadDays < 0 || *in.LeadDays > 30 {
			errs.Add("leadDays", "must be 0 to 30")
		}
		a.LeadDays = *in.LeadDays
	}
	a.BaseComboAPIEndpointURL = apikit.Trimmed(in.BaseComboAPIEndpointURL)
	switch u := a.BaseComboAPIEndpointURL; {
	case u == "":
		errs.Add("baseComboApiEndpointUrl", "is required")
	case len(u) > 2000:
		errs.Add("baseComboApiEndpointUrl", "must be an http or https URL of at most 2000 characters")
	default:
		// A bank whose name does not resolve now (DNS down, not yet
		// published) is no reason to refuse the account: the sync's
		// dialer checks whatever the name resolves to when it is called.
		if err := s.env.Egress.CheckURL(ctx, u); err != nil && !errors.Is(err, egress.ErrUnresolved) {
			errs.Add("baseComboApiEndpointUrl", "%s", err)
		}
	}
	return a, errs.Err()
}

func (s handlers) createAGAccount(w http.ResponseWriter, r *http.Request) error {
	var in AccountCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	a, err := s.accountFromInput(r.Context(), in)
	if err != nil {
		return err
	}
	a, err = CreateAccount(r.Context(), s.env.Store, a, s.env.Now())
	if err != nil {
		return err
	}
	s.env.Created(w, "/avtalegiro/account/"+a.ID, a.ID)
	return nil
}

func (s handlers) listAGAccounts(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := AvtaleGiroAccountFilter{EndpointURL: strings.TrimSpace(q.Get("BaseComboApiEndpointURL"))}
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
	list, next, err := ListAccounts(r.Context(), s.env.Store, f, p)
	if err != nil {
		return err
	}
	s.env.WriteList(w, r, list, next)
	return nil
}

func (s handlers) updateAGAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in AccountUpdate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	a, err := s.accountFromInput(r.Context(), in.AccountCreate)
	if err != nil {
		return err
	}
	a.ID = id
	if err := UpdateAccount(r.Context(), s.env.Store, a, s.env.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) deleteAGAccount(w http.ResponseWriter, r *http.Request) error {
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

func (s handlers) addAGOrganizations(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in []AccountOrganization
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	if len(in) == 0 {
		errs.Add("body", "must list at least one organization")
	}
	ids := make([]string, 0, len(in))
	for i, o := range in {
		v := apikit.UUIDField(&errs, fmt.Sprintf("[%d].id", i), o.ID)
		if v == "" && apikit.Trimmed(o.ID) == "" {
			errs.Add(fmt.Sprintf("[%d].id", i), "is required")
		}
		ids = append(ids, v)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := AddAccountOrganizations(r.Context(), s.env.Store, id, ids, s.env.Now()); err != nil {
		return err
	}
	s.env.Created(w, "/avtalegiro/account/"+id, id)
	return nil
}

func (s handlers) removeAGOrganization(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	org, err := apikit.PathID(r, "organizationId")
	if err != nil {
		return err
	}
	if err := RemoveAccountOrganization(r.Context(), s.env.Store, id, org); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// nokField reads an amount in NOK (øre precision) into øre.
func nokField(errs *validation.Errors, field string, n *apikit.Number) int64 {
	d, err := n.Decimal()
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

func (s handlers) createAGMandate(w http.ResponseWriter, r *http.Request) error {
	var in AvtaleGiroMandateCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	m := NewAvtaleGiroMandate{AccountID: apikit.UUIDField(&errs, "accountId", in.AccountID),
		SubscriberID: apikit.UUIDField(&errs, "subscriberId", in.SubscriberID), KID: apikit.Trimmed(in.KID), Notify: in.Notify != nil && *in.Notify}
	if m.AccountID == "" && apikit.Trimmed(in.AccountID) == "" {
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
	account, err := Account(r.Context(), s.env.Store, m.AccountID)
	if err != nil {
		return validation.Field("accountId", "there is no AvtaleGiro account %s", m.AccountID)
	}
	if why := CheckKID(account, m.KID); why != "" {
		return validation.Field("kid", "%s", why)
	}
	id, err := CreateMandate(r.Context(), s.env.Store, m, s.env.Now())
	if err != nil {
		return err
	}
	s.env.Created(w, "/avtalegiro/mandate/"+id, id)
	return nil
}

func (s handlers) listAGMandates(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := AvtaleGiroMandateFilter{AccountID: apikit.QueryID(q, "AccountId", &errs), SubscriberID: apikit.QueryID(q, "SubscriberId", &errs),
		KID: strings.TrimSpace(q.Get("KID"))}
	if b := apikit.QueryBool(q, "IncludeDeleted", &errs); b != nil {
		f.IncludeDeleted = *b
	}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := ListMandates(r.Context(), s.env.Store, f, p)
	if err != nil {
		return err
	}
	s.env.WriteList(w, r, list, next)
	return nil
}

func (s handlers) deleteAGMandate(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if _, err := DeleteMandate(r.Context(), s.env.Store, id, now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s handlers) createAGClaim(w http.ResponseWriter, r *http.Request) error {
	var in ClaimCreate
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	c := NewAvtaleGiroClaim{MandateID: apikit.UUIDField(&errs, "mandateId", in.MandateID),
		TransactionID: apikit.UUIDField(&errs, "transactionId", in.TransactionID), KID: apikit.Trimmed(in.KID)}
	if c.MandateID == "" && apikit.Trimmed(in.MandateID) == "" {
		errs.Add("mandateId", "is required")
	}
	if in.Amount == nil {
		errs.Add("amount", "is required")
	} else {
		c.Amount = nokField(&errs, "amount", in.Amount)
	}
	var due time.Time
	if v := apikit.Trimmed(in.DueDate); v == "" {
		errs.Add("dueDate", "is required")
	} else if d, err := time.Parse(time.DateOnly, v); err != nil {
		errs.Add("dueDate", "must be a date such as 2027-01-15")
	} else {
		due = d
	}
	c.ExternalReference = apikit.Text(&errs, "externalReference", in.ExternalReference, 25, false)
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
	mandate, err := Mandate(r.Context(), s.env.Store, c.MandateID)
	if err != nil || mandate.DeletedAt != nil {
		return validation.Field("mandateId", "there is no active mandate %s", c.MandateID)
	}
	account, err := Account(r.Context(), s.env.Store, mandate.AccountID)
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if c.KID == "" {
		c.KID = mandate.KID
	} else if why := CheckKID(account, c.KID); why != "" {
		errs.Add("kid", "%s", why)
	}
	if limit := mandate.AmountLimitOre(); limit != nil && c.Amount > *limit {
		errs.Add("amount", "is above the mandate's limit of %s NOK", mandate.AmountLimit.String())
	}
	if why := CheckDue(due, now, account.LeadDays); why != "" {
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
		if sub, err := s.env.Store.Subscriber(r.Context(), *mandate.SubscriberID); err == nil {
			c.ShortName = sub.Name
		}
	}
	c.DueDate, c.NoticeLines = due.Format(time.DateOnly), in.NoticeLines
	claim, created, err := CreateClaim(r.Context(), s.env.Store, c, now)
	if err != nil {
		return err
	}
	if !created {
		w.Header().Set("Location", s.env.BaseURL+"/avtalegiro/claim/"+claim.ID)
		apikit.WriteJSON(w, http.StatusOK, claim.ID)
		return nil
	}
	s.env.Created(w, "/avtalegiro/claim/"+claim.ID, claim.ID)
	return nil
}

func (s handlers) listAGClaims(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := AvtaleGiroClaimFilter{MandateID: apikit.QueryID(q, "MandateId", &errs), TransactionID: apikit.QueryID(q, "TransactionId", &errs),
		KID: strings.TrimSpace(q.Get("KID"))}
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := ListClaims(r.Context(), s.env.Store, f, p)
	if err != nil {
		return err
	}
	s.env.WriteList(w, r, list, next)
	return nil
}

func (s handlers) cancelAGClaim(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	if _, err := CancelClaim(r.Context(), s.env.Store, id, Today(now).Format(time.DateOnly), now); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s handlers) importAGFile(w http.ResponseWriter, r *http.Request) error {
	var file io.Reader = r.Body
	if media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); media == "application/json" || media == "" {
		if s.env.BodyLimit > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, s.env.BodyLimit)
		}
		var in AvtaleGiroImportInput
		if err := apikit.DecodeJSON(r, &in); err != nil {
			return err
		}
		content, err := base64.StdEncoding.DecodeString(apikit.Trimmed(in.Content))
		if err != nil || apikit.Trimmed(in.Content) == "" {
			return validation.Field("content", "must be the file in base64")
		}
		file = bytes.NewReader(content)
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	res, err := Import(r.Context(), s.env.Store, file, now)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe
	}
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, AvtaleGiroImportResult{AvtaleGiroImport: res.Import, Settled: res.Settled, Problems: res.Problems})
	return nil
}

func (s handlers) exportAGClaims(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.env.TenantNow(r.Context())
	if err != nil {
		return err
	}
	f, ok, err := Export(r.Context(), s.env.Store, id, now)
	if err != nil {
		return err
	}
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	apikit.WriteJSON(w, http.StatusOK, f)
	return nil
}

func (s handlers) getAGFile(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := File(r.Context(), s.env.Store, id); err != nil {
		return err
	}
	// Chunk by chunk from the store to the client: the file is never
	// held whole.
	content := bufio.NewReaderSize(FileContent(r.Context(), s.env.Store, id), 32<<10)
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
