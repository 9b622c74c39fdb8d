// Package tenantimport moves a tenant's subscribers, payment agreements and
// running subscriptions from another system into Kadens (`kadens import`,
// docs/MIGRATION.md). It reads a CSV or JSON Lines file, checks every row
// before writing anything, and writes in batches, each in one transaction,
// through the store's and the engine's own functions: subscribers as the
// API creates them, agreements through their provider's check, running
// subscriptions through engine.Importer, so that their renewals are the
// engine's ordinary ones. Imported agreements and subscriptions are
// recorded by their source ids, which makes a rerun create nothing twice;
// the package owns those records (import_records) and their SQL, on the
// store's query kit (sql_records.go).
package tenantimport

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// Format is the file format of an import.
type Format string

// The formats.
const (
	CSV       Format = "csv"
	JSONLines Format = "jsonl"
)

// FormatOf names the format of a file by its extension: .csv, or .jsonl /
// .ndjson / .json (one JSON object a line).
func FormatOf(name string) (Format, bool) {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".csv"):
		return CSV, true
	case strings.HasSuffix(lower, ".jsonl"), strings.HasSuffix(lower, ".ndjson"), strings.HasSuffix(lower, ".json"):
		return JSONLines, true
	}
	return "", false
}

// Subscriber is one subscriber of the file, with its agreements and
// running subscriptions. The JSON names are the JSON Lines format's.
type Subscriber struct {
	Line              int            `json:"-"`
	ExternalID        string         `json:"externalId"`
	SubscriberNumber  int64          `json:"subscriberNumber,omitempty"`
	Name              string         `json:"name"`
	Email             string         `json:"email,omitempty"`
	Phone             string         `json:"phone,omitempty"`
	Country           string         `json:"country,omitempty"`
	Address           Address        `json:"address"`
	Contacts          []Contact      `json:"contacts,omitempty"`
	PaymentAgreements []Agreement    `json:"paymentAgreements,omitempty"`
	Subscriptions     []Subscription `json:"subscriptions,omitempty"`
}

// Address is a postal address.
type Address struct {
	Line1      string `json:"line1,omitempty"`
	Line2      string `json:"line2,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	City       string `json:"city,omitempty"`
	Country    string `json:"country,omitempty"`
}

// Contact is an Invoice or Delivery contact of a subscriber.
type Contact struct {
	Role    string  `json:"role"`
	Name    string  `json:"name,omitempty"`
	Email   string  `json:"email,omitempty"`
	Phone   string  `json:"phone,omitempty"`
	Address Address `json:"address"`
}

// Agreement is a payment agreement, named by the source system's id.
type Agreement struct {
	Line                       int    `json:"-"`
	field                      string // the row's field prefix in problems
	SourceID                   string `json:"sourceId"`
	ProviderType               string `json:"providerType"`
	ProviderAgreementReference string `json:"providerAgreementReference,omitempty"`
	PaymentMethod              string `json:"paymentMethod,omitempty"`
}

// Subscription is a running subscription: the current period (the newest
// the source system created and billed) and where it is on its template
// package and chain.
type Subscription struct {
	Line  int    `json:"-"`
	field string // the row's field prefix in problems
	// SourceID is the source system's id of the subscription (of its
	// series: the first period's id, or any id that stays the same).
	SourceID          string `json:"sourceId"`
	OrganizationID    string `json:"organizationId,omitempty"`
	TemplatePackageID string `json:"templatePackageId"`
	// PaymentAgreementSourceID names one of the subscriber's agreements in
	// the file (or imported before); empty means the Invoice agreement.
	PaymentAgreementSourceID string           `json:"paymentAgreementSourceId,omitempty"`
	BillingPlanID            string           `json:"billingPlanId,omitempty"`
	Units                    *int             `json:"units,omitempty"`
	PriceOverride            *decimal.Decimal `json:"priceOverride,omitempty"`
	ChainStepPeriod          int              `json:"chainStepPeriod,omitempty"`
	SeriesStart              string           `json:"seriesStart,omitempty"`
	PeriodStart              string           `json:"periodStart"`
	PeriodEnd                string           `json:"periodEnd"`
	// Price is what the source billed for the current period (checked).
	Price *decimal.Decimal `json:"price,omitempty"`
}

// Problem is what is wrong with one row: the file, line and field, as a
// 400 response would name them.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Field == "" {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Field, p.Message)
}

// maxLine bounds one line of a file (a subscriber with many subscriptions
// in JSON Lines).
const maxLine = 4 << 20

// parse reads the file's subscribers in file order; problems of the
// file's form (bad JSON, an unknown column) are returned as problems.
func parse(r io.Reader, name string, f Format) ([]*Subscriber, []Problem, error) {
	switch f {
	case CSV:
		return parseCSV(r, name)
	case JSONLines:
		return parseJSONLines(r, name)
	}
	return nil, nil, fmt.Errorf("tenantimport: unknown format %q", f)
}

func parseJSONLines(r io.Reader, name string) ([]*Subscriber, []Problem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var (
		out      []*Subscriber
		problems []Problem
	)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "//") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		var s Subscriber
		if err := dec.Decode(&s); err != nil {
			problems = append(problems, Problem{File: name, Line: line, Message: "not a subscriber object: " + jsonProblem(err)})
			continue
		}
		if dec.More() {
			problems = append(problems, Problem{File: name, Line: line, Message: "one JSON object a line: text follows the object"})
			continue
		}
		s.Line = line
		for i := range s.PaymentAgreements {
			s.PaymentAgreements[i].Line, s.PaymentAgreements[i].field = line, fmt.Sprintf("paymentAgreements[%d].", i)
		}
		for i := range s.Subscriptions {
			s.Subscriptions[i].Line, s.Subscriptions[i].field = line, fmt.Sprintf("subscriptions[%d].", i)
		}
		out = append(out, &s)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, append(problems, Problem{File: name, Line: line + 1, Message: fmt.Sprintf("line longer than %d bytes", maxLine)}), nil
		}
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, problems, nil
}

// jsonProblem words a decoding error without Go type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %s has the wrong type (JSON %s)", te.Field, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// csvColumns are the CSV format's columns; subscriberExternalId and name
// are required in the header, the rest may be left out.
var csvColumns = []string{
	"subscriberExternalId", "subscriberNumber", "name", "email", "phone", "country",
	"addressLine1", "addressLine2", "postalCode", "city", "addressCountry",
	"invoiceContactName", "invoiceContactEmail", "invoiceContactPhone", "invoiceContactAddressLine1",
	"invoiceContactAddressLine2", "invoiceContactPostalCode", "invoiceContactCity", "invoiceContactCountry",
	"agreementSourceId", "providerType", "providerAgreementReference", "paymentMethod",
	"subscriptionSourceId", "organizationId", "templatePackageId", "billingPlanId", "units", "priceOverride",
	"chainStepPeriod", "seriesStart", "periodStart", "periodEnd", "price",
}

// parseCSV reads the CSV format: one row per running subscription (or per
// subscriber without one); rows of the same subscriberExternalId are one
// subscriber, whose fields the first row gives and later rows repeat or
// leave empty.
func parseCSV(r io.Reader, name string) ([]*Subscriber, []Problem, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, []Problem{{File: name, Line: 1, Message: "empty file: the first line must be the header"}}, nil
	}
	if err != nil {
		return nil, []Problem{{File: name, Line: 1, Message: csvProblem(err)}}, nil
	}
	col := map[string]int{}
	var problems []Problem
	known := map[string]bool{}
	for _, c := range csvColumns {
		known[c] = true
	}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		switch _, dup := col[h]; {
		case !known[h]:
			problems = append(problems, Problem{File: name, Line: 1, Field: h, Message: "unknown column; the columns are " + strings.Join(csvColumns, ", ")})
		case dup:
			problems = append(problems, Problem{File: name, Line: 1, Field: h, Message: "column given twice"})
		}
		col[h] = i
	}
	for _, req := range []string{"subscriberExternalId", "name"} {
		if _, ok := col[req]; !ok {
			problems = append(problems, Problem{File: name, Line: 1, Field: req, Message: "required column missing from the header"})
		}
	}
	if len(problems) > 0 {
		return nil, problems, nil
	}
	var (
		out  []*Subscriber
		byID = map[string]*Subscriber{}
	)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			problems = append(problems, Problem{File: name, Line: line, Message: csvProblem(err)})
			continue
		}
		if len(rec) != len(header) {
			problems = append(problems, Problem{File: name, Line: line, Message: fmt.Sprintf("%d fields, the header has %d", len(rec), len(header))})
			continue
		}
		get := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		var bad []Problem
		fail := func(field, format string, args ...any) {
			bad = append(bad, Problem{File: name, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
		}
		s := Subscriber{Line: line, ExternalID: get("subscriberExternalId"), Name: get("name"), Email: get("email"),
			Phone: get("phone"), Country: get("country"),
			Address: Address{Line1: get("addressLine1"), Line2: get("addressLine2"), PostalCode: get("postalCode"),
				City: get("city"), Country: get("addressCountry")}}
		if v := get("subscriberNumber"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				fail("subscriberNumber", "%q is not a positive whole number", v)
			}
			s.SubscriberNumber = n
		}
		if c := (Contact{Role: "Invoice", Name: get("invoiceContactName"), Email: get("invoiceContactEmail"), Phone: get("invoiceContactPhone"),
			Address: Address{Line1: get("invoiceContactAddressLine1"), Line2: get("invoiceContactAddressLine2"),
				PostalCode: get("invoiceContactPostalCode"), City: get("invoiceContactCity"), Country: get("invoiceContactCountry")}}); c != (Contact{Role: "Invoice"}) {
			s.Contacts = []Contact{c}
		}
		var agreement *Agreement
		if get("agreementSourceId") != "" || get("providerType") != "" {
			agreement = &Agreement{Line: line, SourceID: get("agreementSourceId"), ProviderType: get("providerType"),
				ProviderAgreementReference: get("providerAgreementReference"), PaymentMethod: get("paymentMethod")}
		}
		var sub *Subscription
		if get("subscriptionSourceId") != "" || get("templatePackageId") != "" || get("periodStart") != "" {
			sub = &Subscription{Line: line, SourceID: get("subscriptionSourceId"), OrganizationID: get("organizationId"),
				TemplatePackageID: get("templatePackageId"), BillingPlanID: get("billingPlanId"),
				SeriesStart: get("seriesStart"), PeriodStart: get("periodStart"), PeriodEnd: get("periodEnd")}
			if agreement != nil {
				sub.PaymentAgreementSourceID = agreement.SourceID
			}
			if v := get("units"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					fail("units", "%q is not a whole number", v)
				}
				sub.Units = &n
			}
			if v := get("chainStepPeriod"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					fail("chainStepPeriod", "%q is not a whole number of at least 1", v)
				}
				sub.ChainStepPeriod = n
			}
			for _, d := range []struct {
				col string
				to  **decimal.Decimal
			}{{"priceOverride", &sub.PriceOverride}, {"price", &sub.Price}} {
				if v := get(d.col); v != "" {
					x, err := decimal.NewFromString(v)
					if err != nil {
						fail(d.col, "%q is not a decimal amount (a dot before the minor units: 149.00)", v)
					}
					*d.to = &x
				}
			}
		}
		if len(bad) > 0 {
			problems = append(problems, bad...)
			continue
		}
		prev, seen := byID[s.ExternalID]
		if !seen || s.ExternalID == "" {
			if agreement != nil {
				s.PaymentAgreements = []Agreement{*agreement}
			}
			if sub != nil {
				s.Subscriptions = []Subscription{*sub}
			}
			cp := s
			out = append(out, &cp)
			if s.ExternalID != "" {
				byID[s.ExternalID] = &cp
			}
			continue
		}
		// A later row of the same subscriber: its subscriber fields repeat
		// the first row's or are empty; its agreement and subscription add.
		if p := sameSubscriber(prev, &s); p != "" {
			problems = append(problems, Problem{File: name, Line: line, Field: p,
				Message: fmt.Sprintf("differs from line %d of the same subscriberExternalId (repeat it or leave it empty)", prev.Line)})
			continue
		}
		if agreement != nil {
			dup := false
			for _, a := range prev.PaymentAgreements {
				if a.SourceID == agreement.SourceID && agreement.SourceID != "" {
					dup = true
					if a.ProviderType != agreement.ProviderType || a.ProviderAgreementReference != agreement.ProviderAgreementReference || a.PaymentMethod != agreement.PaymentMethod {
						problems = append(problems, Problem{File: name, Line: line, Field: "agreementSourceId",
							Message: fmt.Sprintf("%q is described differently on line %d", agreement.SourceID, a.Line)})
					}
				}
			}
			if !dup {
				prev.PaymentAgreements = append(prev.PaymentAgreements, *agreement)
			}
		}
		if sub != nil {
			prev.Subscriptions = append(prev.Subscriptions, *sub)
		}
	}
	return out, problems, nil
}

// sameSubscriber returns the first column in which later row b gives a
// subscriber field other than first row a's, or "".
func sameSubscriber(a, b *Subscriber) string {
	for _, f := range []struct{ col, x, y string }{
		{"name", a.Name, b.Name}, {"email", a.Email, b.Email}, {"phone", a.Phone, b.Phone}, {"country", a.Country, b.Country},
		{"addressLine1", a.Address.Line1, b.Address.Line1}, {"addressLine2", a.Address.Line2, b.Address.Line2},
		{"postalCode", a.Address.PostalCode, b.Address.PostalCode}, {"city", a.Address.City, b.Address.City},
		{"addressCountry", a.Address.Country, b.Address.Country},
	} {
		if f.y != "" && f.y != f.x {
			return f.col
		}
	}
	if b.SubscriberNumber != 0 && b.SubscriberNumber != a.SubscriberNumber {
		return "subscriberNumber"
	}
	if len(b.Contacts) > 0 && (len(a.Contacts) == 0 || a.Contacts[0] != b.Contacts[0]) {
		return "invoiceContactName"
	}
	return ""
}

func csvProblem(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return "not valid CSV: " + pe.Err.Error()
	}
	return err.Error()
}
