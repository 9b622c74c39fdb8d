// Package peppol sends Kadens' invoices and credit notes through the Peppol
// e-invoicing network (EHF in Norway, OIO in Denmark and Sweden): it writes
// them as UBL 2.1 documents of Peppol BIS Billing 3.0 (ubl.go), finds out
// whether a recipient can receive them (participant ids, the SML's DNS
// NAPTR records and the SMP's REST answers, lookup.go) and hands them to an
// access point, once per document (deliver.go). See docs/PEPPOL.md.
package peppol

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kadens/kadens/internal/checkdigit"
)

// ISO 6523 ICD codes Peppol uses for participant identifiers and UBL
// EndpointID/@schemeID.
const (
	SchemeNorwayOrg  = "0192" // Norwegian organisasjonsnummer
	SchemeCVR        = "0184" // Danish CVR number
	SchemeGLN        = "0088" // GS1 GLN
	SchemeSwedishOrg = "0007" // Swedish organisationsnummer
)

// The contract's documentNetwork values: country selectors (product
// decisions §8), not the Peppol schemes themselves.
const (
	NetworkNorway  = "0192"
	NetworkDenmark = "0096"
	NetworkSweden  = "0107"
)

// Networks lists the accepted documentNetwork values.
var Networks = []string{NetworkNorway, NetworkDenmark, NetworkSweden}

// ParticipantScheme is the Peppol identifier scheme of participant ids.
const ParticipantScheme = "iso6523-actorid-upis"

// ParticipantID is a Peppol participant: an ICD scheme and the identifier
// under it, e.g. 0192:923609016.
type ParticipantID struct {
	Scheme string `json:"scheme" example:"0192"`
	Value  string `json:"value" example:"923609016"`
}

// String is the participant's full id,
// iso6523-actorid-upis::0192:923609016.
func (p ParticipantID) String() string { return ParticipantScheme + "::" + p.Value0() }

// Value0 is the identifier value as the SML hashes it: scheme:value,
// lower-cased (identifier values of the scheme are case-insensitive).
func (p ParticipantID) Value0() string { return strings.ToLower(p.Scheme + ":" + p.Value) }

// IdentifierError says what is wrong with a recipient identifier (a 400 on
// the field that carried it).
type IdentifierError struct{ Msg string }

func (e *IdentifierError) Error() string { return e.Msg }

// ErrUnknownNetwork: documentNetwork is none of Networks.
var ErrUnknownNetwork = errors.New("must be one of 0192 (Norway), 0096 (Denmark), 0107 (Sweden)")

// Participant maps the contract's documentNetwork (a country selector) and
// a recipient identifier, as typed, to the Peppol participant id to look
// up and to write as the buyer's EndpointID (docs/PEPPOL.md):
//
//	0192 + 9 digits (MOD11)         → 0192:<org nr>
//	0096 + 8 digits (CVR modulus 11) → 0184:<CVR>
//	0096 or 0107 + 13 digits (GS1)  → 0088:<GLN>
//	0107 + 10 digits (Luhn)         → 0007:<org nr>
//
// A wrong shape or check digit is an *IdentifierError; an unknown network
// ErrUnknownNetwork.
func Participant(network, identifier string) (ParticipantID, error) {
	id := strings.ReplaceAll(strings.TrimSpace(identifier), " ", "")
	bad := func(what string, err error) (ParticipantID, error) {
		var fe *checkdigit.FormatError
		if errors.As(err, &fe) {
			return ParticipantID{}, &IdentifierError{Msg: fmt.Sprintf("%s must be %s", what, fe.Want)}
		}
		return ParticipantID{}, &IdentifierError{Msg: fmt.Sprintf("%s: %v", what, err)}
	}
	switch network {
	case NetworkNorway:
		v, err := checkdigit.NorwegianOrgNumber(id)
		if err != nil {
			return bad("a Norwegian organization number", err)
		}
		return ParticipantID{Scheme: SchemeNorwayOrg, Value: v}, nil
	case NetworkDenmark:
		switch len(id) {
		case 13:
			v, err := checkdigit.GLN(id)
			if err != nil {
				return bad("a GLN", err)
			}
			return ParticipantID{Scheme: SchemeGLN, Value: v}, nil
		default:
			v, err := checkdigit.CVR(id)
			if err != nil {
				return ParticipantID{}, &IdentifierError{Msg: "a Danish recipient must be a CVR number (8 digits, modulus 11) or a GLN (13 digits): " + err.Error()}
			}
			return ParticipantID{Scheme: SchemeCVR, Value: v}, nil
		}
	case NetworkSweden:
		switch len(id) {
		case 10:
			v, err := checkdigit.SwedishOrgNumber(id)
			if err != nil {
				return bad("a Swedish organization number", err)
			}
			return ParticipantID{Scheme: SchemeSwedishOrg, Value: v}, nil
		default:
			v, err := checkdigit.GLN(id)
			if err != nil {
				return ParticipantID{}, &IdentifierError{Msg: "a Swedish recipient must be a GLN (13 digits, GS1 check digit) or an organization number (10 digits, Luhn): " + err.Error()}
			}
			return ParticipantID{Scheme: SchemeGLN, Value: v}, nil
		}
	}
	return ParticipantID{}, ErrUnknownNetwork
}

// AgreementParticipant is the participant an EHF or OIO payment agreement
// names: EHF takes a Norwegian organization number, OIO a CVR number or a
// GLN (what POST /paymentagreement accepts).
func AgreementParticipant(providerType, reference string) (ParticipantID, error) {
	switch providerType {
	case "EHF":
		return Participant(NetworkNorway, reference)
	case "OIO":
		// CVR (8 digits) → 0184, GLN (13 digits) → 0088, as for Denmark.
		return Participant(NetworkDenmark, reference)
	}
	return ParticipantID{}, fmt.Errorf("peppol: provider type %q is not an invoice network", providerType)
}

// countryScheme is the legal-entity scheme of a seller's organization
// number by the seller's country.
func countryScheme(country string) (string, bool) {
	switch country {
	case "NO":
		return SchemeNorwayOrg, true
	case "DK":
		return SchemeCVR, true
	case "SE":
		return SchemeSwedishOrg, true
	}
	return "", false
}

// schemeCountry is the country of a legal-entity scheme ("" for GLN).
func schemeCountry(scheme string) string {
	switch scheme {
	case SchemeNorwayOrg:
		return "NO"
	case SchemeCVR:
		return "DK"
	case SchemeSwedishOrg:
		return "SE"
	}
	return ""
}
