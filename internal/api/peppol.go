package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
)

// DocumentNetworkLookupInput is the body of POST
// /invoice/documentnetworklookup.
type DocumentNetworkLookupInput struct {
	DocumentNetwork     *string `json:"documentNetwork" required:"true" enum:"0192,0096,0107" example:"0192" description:"The recipient's country, as the contract's ISO 6523 codes: 0192 Norway (EHF), 0096 Denmark (OIO), 0107 Sweden (OIO). A country selector: the Peppol scheme looked up follows from the identifier (see participantId)."`
	RecipientIdentifier *string `json:"recipientIdentifier" required:"true" maxLength:"50" example:"923609016" description:"Norway: organization number (9 digits, MOD11). Denmark: CVR (8 digits, modulus 11) or GLN (13 digits). Sweden: GLN (13 digits) or organization number (10 digits, Luhn). Spaces are removed."`
}

// DocumentNetworkLookupResult answers a lookup.
type DocumentNetworkLookupResult struct {
	DocumentNetwork     string    `json:"documentNetwork" example:"0192"`
	RecipientIdentifier string    `json:"recipientIdentifier" example:"923609016" description:"The identifier as looked up (digits only)."`
	Registered          bool      `json:"registered" description:"The recipient is registered in the Peppol network and receives Peppol BIS Billing 3.0 invoices: an EHF or OIO payment agreement will reach it."`
	ParticipantID       string    `json:"participantId" example:"iso6523-actorid-upis::0192:923609016" description:"The Peppol participant id looked up (Danish CVR numbers are scheme 0184, GLNs 0088, Swedish organization numbers 0007)."`
	FoundInNetwork      bool      `json:"foundInNetwork" description:"The network knows the participant, whatever it receives."`
	AcceptsInvoice      bool      `json:"acceptsInvoice"`
	AcceptsCreditNote   bool      `json:"acceptsCreditNote"`
	SMPURL              *string   `json:"smpUrl" description:"The metadata server (SMP) that answered; null when the participant is not in the network or the answer came from the Peppol Directory."`
	Source              string    `json:"source" enum:"SML,Directory" description:"SML: the network's DNS and the participant's SMP (authoritative). Directory: the Peppol Directory, asked only when the SML could not be."`
	CheckedAt           time.Time `json:"checkedAt" description:"When the network was asked (answers are cached)."`
}

var (
	respBadGateway = response{status: http.StatusBadGateway, body: new(ServerError),
		desc: "The recipient's metadata server (SMP) or the Peppol Directory failed; nothing is known about the recipient. Try again later."}
	respUnavailable = response{status: http.StatusServiceUnavailable, body: new(ServerError),
		desc:    "The Peppol network's DNS (SML) could not be asked, or lookups are not configured; nothing is known about the recipient. Try again later.",
		headers: map[string]string{"Retry-After": "Seconds to wait before trying again."}}
	respNotNetwork = response{status: http.StatusConflict, body: new(ServerError),
		desc: "The document was not issued on an EHF or OIO payment agreement (it has no Peppol recipient), or cannot be written as Peppol BIS Billing 3.0 (the message says why)."}
)

func (s *Server) peppolRoutes() {
	s.add(route{method: http.MethodPost, path: "/invoice/documentnetworklookup", id: "documentNetworkLookup", tag: "Invoice",
		summary: "Check that a recipient is registered in the invoice network (Peppol)",
		desc: "Validates the identifier's check digits (400 naming the field), maps the country and identifier to the Peppol " +
			"participant id, and asks the network: the SML by DNS, then the participant's SMP. Registered means the recipient " +
			"receives Peppol BIS Billing 3.0 invoices. Answers are cached. A network failure is a 502 or 503, never a " +
			"\"not registered\".",
		request:   new(DocumentNetworkLookupInput),
		responses: common(response{status: http.StatusOK, body: new(DocumentNetworkLookupResult)}, respBadGateway, respUnavailable),
		handle:    s.documentNetworkLookup})
	s.add(route{method: http.MethodGet, path: "/invoice/{id}/ubl", id: "getInvoiceUBL", tag: "Invoice",
		summary: "Get an invoice as Peppol BIS Billing 3.0 (UBL 2.1)",
		desc:    "The document the invoice network receives, for an invoice issued on an EHF or OIO payment agreement.",
		request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, contentType: peppol.ContentType, desc: "The UBL 2.1 Invoice."},
			respNotFound, respNotNetwork),
		handle: s.getInvoiceUBL})
	s.add(route{method: http.MethodGet, path: "/creditnote/{id}/ubl", id: "getCreditNoteUBL", tag: "CreditNote",
		summary: "Get a credit note as Peppol BIS Billing 3.0 (UBL 2.1)",
		desc:    "The document the invoice network receives, for a credit note of an invoice issued on an EHF or OIO payment agreement.",
		request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, contentType: peppol.ContentType, desc: "The UBL 2.1 CreditNote."},
			respNotFound, respNotNetwork),
		handle: s.getCreditNoteUBL})
	s.add(route{method: http.MethodGet, path: "/invoice/{id}/peppoldelivery", id: "getInvoicePeppolDelivery", tag: "Invoice",
		summary: "Get the delivery of an invoice through the invoice network",
		desc:    "Pending, Sent, Delivered or Failed (with the reason). 404 when the invoice has not been sent through the network.",
		request: new(apikit.IDParam), responses: common(response{status: http.StatusOK, body: new(peppol.PeppolDelivery)}, respNotFound),
		handle: s.getPeppolDelivery(peppol.PeppolInvoice)})
	s.add(route{method: http.MethodGet, path: "/creditnote/{id}/peppoldelivery", id: "getCreditNotePeppolDelivery", tag: "CreditNote",
		summary: "Get the delivery of a credit note through the invoice network",
		desc:    "Pending, Sent, Delivered or Failed (with the reason). 404 when the credit note has not been sent through the network.",
		request: new(apikit.IDParam), responses: common(response{status: http.StatusOK, body: new(peppol.PeppolDelivery)}, respNotFound),
		handle: s.getPeppolDelivery(peppol.PeppolCreditNote)})
}

// writeProblem answers status with a ServerError body saying why.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	apikit.WriteJSON(w, status, ServerError{Code: code, Message: msg, RequestID: requestID(r.Context())})
}

func (s *Server) documentNetworkLookup(w http.ResponseWriter, r *http.Request) error {
	var in DocumentNetworkLookupInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	network, ident := apikit.Trimmed(in.DocumentNetwork), apikit.Trimmed(in.RecipientIdentifier)
	switch {
	case network == "":
		return fieldErr("documentNetwork", "is required: 0192 (Norway), 0096 (Denmark) or 0107 (Sweden)")
	case ident == "":
		return fieldErr("recipientIdentifier", "is required")
	}
	p, err := peppol.Participant(network, ident)
	var ie *peppol.IdentifierError
	switch {
	case errors.Is(err, peppol.ErrUnknownNetwork):
		return fieldErr("documentNetwork", err.Error())
	case errors.As(err, &ie):
		return fieldErr("recipientIdentifier", ie.Msg)
	case err != nil:
		return err
	}
	if s.peppol == nil {
		w.Header().Set("Retry-After", "60")
		writeProblem(w, r, http.StatusServiceUnavailable, "lookup_unavailable", "Peppol lookups are not configured on this server.")
		return nil
	}
	res, err := s.peppol.Lookup(r.Context(), p)
	var le *peppol.LookupError
	if errors.As(err, &le) {
		logger(r.Context()).WarnContext(r.Context(), "peppol lookup failed", "participant", p.String(), "err", err.Error())
		if le.Stage == "SML" {
			w.Header().Set("Retry-After", "30")
			writeProblem(w, r, http.StatusServiceUnavailable, "network_unavailable",
				"The Peppol network's DNS (SML) did not answer; whether "+p.String()+" is registered is unknown. Try again later.")
			return nil
		}
		writeProblem(w, r, http.StatusBadGateway, "smp_failed",
			"The Peppol "+le.Stage+" failed to answer for "+p.String()+"; whether it is registered is unknown. Try again later.")
		return nil
	}
	if err != nil {
		return err
	}
	out := DocumentNetworkLookupResult{DocumentNetwork: network, RecipientIdentifier: p.Value, Registered: res.Registered(),
		ParticipantID: p.String(), FoundInNetwork: res.Found, AcceptsInvoice: res.AcceptsInvoice,
		AcceptsCreditNote: res.AcceptsCreditNote, Source: res.Source, CheckedAt: res.CheckedAt.UTC()}
	if res.SMP != "" {
		out.SMPURL = &res.SMP
	}
	apikit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// ublOptions are the options of inv's UBL: its recipient and its
// organization's zone; ok is false for an invoice outside the network.
func (s *Server) ublOptions(r *http.Request, inv store.Invoice) (peppol.Options, bool, error) {
	buyer, ok, err := peppol.Recipient(r.Context(), s.store, inv)
	if err != nil || !ok {
		return peppol.Options{}, false, err
	}
	opt := peppol.Options{Buyer: buyer, Location: time.UTC}
	switch org, err := s.app.Organization(r.Context(), inv.OrganizationID); {
	case err == nil:
		if loc, err := period.LoadZone(org.TimeZone); err == nil {
			opt.Location = loc
		}
	case !errors.Is(err, store.ErrNotFound):
		return peppol.Options{}, false, err
	}
	return opt, true, nil
}

func (s *Server) writeUBL(w http.ResponseWriter, r *http.Request, name string, gen func(peppol.Options) ([]byte, error), inv store.Invoice) error {
	opt, ok, err := s.ublOptions(r, inv)
	if err != nil {
		return err
	}
	if !ok {
		writeProblem(w, r, http.StatusConflict, "not_network_document",
			"Invoice "+strconv.FormatInt(inv.InvoiceNumber, 10)+" was not issued on an EHF or OIO payment agreement: it has no Peppol recipient.")
		return nil
	}
	doc, err := gen(opt)
	if errors.Is(err, peppol.ErrNotRepresentable) {
		writeProblem(w, r, http.StatusConflict, "not_representable", err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", peppol.ContentType)
	h.Set("Content-Disposition", `inline; filename="`+name+`.xml"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
	return nil
}

func (s *Server) getInvoiceUBL(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	inv, err := s.app.Invoice(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeUBL(w, r, "invoice-"+strconv.FormatInt(inv.InvoiceNumber, 10),
		func(o peppol.Options) ([]byte, error) { return peppol.Invoice(inv, o) }, inv)
}

func (s *Server) getCreditNoteUBL(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	cn, err := s.app.CreditNote(r.Context(), id)
	if err != nil {
		return err
	}
	inv, err := s.app.Invoice(r.Context(), cn.InvoiceID)
	if err != nil {
		return err
	}
	return s.writeUBL(w, r, "creditnote-"+strconv.FormatInt(cn.CreditNoteNumber, 10),
		func(o peppol.Options) ([]byte, error) { return peppol.CreditNote(cn, inv, o) }, inv)
}

func (s *Server) getPeppolDelivery(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := apikit.PathID(r, "id")
		if err != nil {
			return err
		}
		d, err := peppol.Delivery(r.Context(), s.store, kind, id)
		if err != nil {
			return err
		}
		apikit.WriteJSON(w, http.StatusOK, d)
		return nil
	}
}
