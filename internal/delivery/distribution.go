package delivery

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The daily distribution list (docs/PRINT.md, "The distribution list"):
// what must be printed and carried on one publishing day. This file holds
// its shapes and the rules that need no database: the stable copy id, the
// delta between two days, and the CSV and JSON Lines encodings, which are
// the same for the API and `kadens distribution export`.

// CopyAddress is where a copy is delivered on a day, with the carrier and
// route the tenant's postal-code table gives it (empty when the table has
// no deliverable entry for its postal code).
type CopyAddress struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	PostalCode string `json:"postalCode"`
	City       string `json:"city"`
	Country    string `json:"country"`
	Carrier    string `json:"carrier"`
	Route      string `json:"route"`
}

// Address sources: which of a copy's addresses applies on the day.
const (
	AddressSubscriber = "Subscriber" // the subscriber's own (invoice) address
	// AddressPermanent: a permanent delivery address change in effect;
	// AddressTemporary: a temporary delivery address covering the day.
)

// Copy is one print product delivered to one series on one day: a line of
// the distribution list. ID is stable for as long as the order's series
// delivers the product, across renewals, chain steps and plan changes
// that keep it (CopyID), so a carrier's system can reconcile day by day.
type Copy struct {
	ID             string      `json:"copyId"`
	ProductID      string      `json:"productId"`
	OrderID        string      `json:"orderId"`
	SubscriptionID string      `json:"subscriptionId"`
	SubscriberID   string      `json:"subscriberId"`
	Quantity       int         `json:"quantity"`
	AddressSource  string      `json:"addressSource"`
	Address        CopyAddress `json:"address"`
}

// CopyID is the copy of product productID delivered to the series of
// order orderID: the first 80 bits of SHA-256 over both, in lowercase
// base32 (16 characters). An order begins exactly one series, and its
// renewals and plan changes keep the order, so the id does not move while
// the product is delivered; 80 bits keep a collision out of reach at
// millions of copies.
func CopyID(orderID, productID string) string {
	sum := sha256.Sum256([]byte(orderID + "/" + productID))
	return strings.ToLower(base32.StdEncoding.EncodeToString(sum[:10]))
}

// Changes in a delta: what happened to a copy since the product's
// previous delivery day.
const (
	ChangeNew     = "New"     // delivered now, not a copy then
	ChangeStopped = "Stopped" // delivered then, on a vacation stop now
	ChangeResumed = "Resumed" // on a stop then, delivered now
	ChangeMoved   = "Moved"   // delivered both days, to another address (or carrier, route) now
	ChangeEnded   = "Ended"   // a copy then (delivered or stopped), none now
)

// Change is one line of a delta: the copy as it is now (New, Resumed,
// Moved) or as it was (Stopped, Ended: the address it was delivered to).
type Change struct {
	Change string `json:"change"`
	Copy
}

// dayState is a copy's state on one day: absent (no copy), stopped (a
// copy on a vacation stop) or delivered.
type dayState struct {
	present bool
	stopped bool
	copy    Copy
}

// diff decides the change of one copy between the previous delivery day
// and this one; ok is false when nothing a carrier must act on changed.
func diff(then, now dayState) (Change, bool) {
	delivered := func(s dayState) bool { return s.present && !s.stopped }
	switch {
	case delivered(then) && delivered(now):
		if then.copy.Address != now.copy.Address || then.copy.Quantity != now.copy.Quantity {
			return Change{ChangeMoved, now.copy}, true
		}
	case delivered(then) && now.present: // stopped now
		return Change{ChangeStopped, then.copy}, true
	case then.present && !now.present:
		return Change{ChangeEnded, then.copy}, true
	case then.present && delivered(now): // stopped then
		return Change{ChangeResumed, now.copy}, true
	case !then.present && delivered(now):
		return Change{ChangeNew, now.copy}, true
	}
	return Change{}, false
}

// Apply applies a delta to the list of the previous delivery day, by copy
// id: what a carrier's system does with it. The list of the day equals
// Apply(previous list, delta) (TestDistributionDeltaProperty); the
// result's order is not the list's (callers that compare sort).
func Apply(list []Copy, delta []Change) []Copy {
	byID := make(map[string]Copy, len(list))
	order := make([]string, 0, len(list))
	for _, c := range list {
		byID[c.ID] = c
		order = append(order, c.ID)
	}
	for _, d := range delta {
		switch d.Change {
		case ChangeNew, ChangeResumed, ChangeMoved:
			if _, ok := byID[d.ID]; !ok {
				order = append(order, d.ID)
			}
			byID[d.ID] = d.Copy
		case ChangeStopped, ChangeEnded:
			delete(byID, d.ID)
		}
	}
	out := make([]Copy, 0, len(byID))
	for _, id := range order {
		if c, ok := byID[id]; ok {
			out = append(out, c)
			delete(byID, id)
		}
	}
	return out
}

// RouteCount is the print run of one product to one postal code of one
// route: the copies (quantities summed) on the day's list.
type RouteCount struct {
	Carrier    string `json:"carrier"`
	Route      string `json:"route"`
	PostalCode string `json:"postalCode"`
	ProductID  string `json:"productId"`
	Copies     int    `json:"copies"`
}

// Formats of the list's encodings.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// ContentType is the media type of a format.
func ContentType(format string) string {
	if format == FormatCSV {
		return "text/csv; charset=utf-8"
	}
	return "application/jsonl; charset=utf-8"
}

// Encoder writes list, delta or count lines in one format, a line at a
// time (nothing is held): CSV with a header row (RFC 4180, comma, CRLF),
// or JSON Lines (one object per line).
type Encoder struct {
	// count, when set, takes the counts instead of an encoding (a
	// publication totals them per carrier).
	count  func(RouteCount)
	format string
	csv    *csv.Writer
	json   *json.Encoder
	header bool
}

// NewEncoder writes to w in format (FormatCSV or FormatJSONL).
func NewEncoder(w io.Writer, format string) (*Encoder, error) {
	switch format {
	case FormatCSV:
		c := csv.NewWriter(w)
		c.UseCRLF = true
		return &Encoder{format: format, csv: c}, nil
	case FormatJSONL:
		return &Encoder{format: format, json: json.NewEncoder(w)}, nil
	}
	return nil, fmt.Errorf("delivery: format %q: want csv or jsonl", format)
}

var (
	copyHeader  = []string{"date", "copyId", "productId", "quantity", "carrier", "route", "postalCode", "city", "country", "name", "line1", "line2", "addressSource", "subscriberId", "subscriptionId", "orderId"}
	countHeader = []string{"date", "carrier", "route", "postalCode", "productId", "copies"}
)

func copyFields(day Date, c Copy) []string {
	a := c.Address
	return []string{day.String(), c.ID, c.ProductID, strconv.Itoa(c.Quantity), a.Carrier, a.Route, a.PostalCode, a.City, a.Country,
		a.Name, a.Line1, a.Line2, c.AddressSource, c.SubscriberID, c.SubscriptionID, c.OrderID}
}

type copyLine struct {
	Date string `json:"date"`
	Copy
}

type changeLine struct {
	Date string `json:"date"`
	Change
}

type countLine struct {
	Date string `json:"date"`
	RouteCount
}

// Copy writes a line of the day's list.
func (e *Encoder) Copy(day Date, c Copy) error {
	if e.csv != nil {
		if err := e.writeHeader(copyHeader); err != nil {
			return err
		}
		return e.csv.Write(copyFields(day, c))
	}
	return e.json.Encode(copyLine{day.String(), c})
}

// Change writes a line of the day's delta (the list's columns after a
// "change" column).
func (e *Encoder) Change(day Date, c Change) error {
	if e.csv != nil {
		if err := e.writeHeader(append([]string{"change"}, copyHeader...)); err != nil {
			return err
		}
		return e.csv.Write(append([]string{c.Change}, copyFields(day, c.Copy)...))
	}
	return e.json.Encode(changeLine{day.String(), c})
}

// Count writes a line of the day's counts.
func (e *Encoder) Count(day Date, c RouteCount) error {
	if e.count != nil {
		e.count(c)
		return nil
	}
	if e.csv != nil {
		if err := e.writeHeader(countHeader); err != nil {
			return err
		}
		return e.csv.Write([]string{day.String(), c.Carrier, c.Route, c.PostalCode, c.ProductID, strconv.Itoa(c.Copies)})
	}
	return e.json.Encode(countLine{day.String(), c})
}

func (e *Encoder) writeHeader(h []string) error {
	if e.header {
		return nil
	}
	e.header = true
	return e.csv.Write(h)
}

// Flush ends the output: an empty CSV list still has its header, so a
// file of no copies is told from a broken one.
func (e *Encoder) Flush(kind string) error {
	if e.csv == nil { // JSON Lines, or counts taken
		return nil
	}
	if !e.header {
		h := copyHeader
		switch kind {
		case ViewDelta:
			h = append([]string{"change"}, copyHeader...)
		case ViewCounts:
			h = countHeader
		}
		if err := e.writeHeader(h); err != nil {
			return err
		}
	}
	e.csv.Flush()
	return e.csv.Error()
}

// The views of a day: its list, its delta against each product's previous
// delivery day, and its counts per route and postal code.
const (
	ViewList   = "list"
	ViewDelta  = "delta"
	ViewCounts = "counts"
)

// In is the day's first instant in loc (local midnight; on a DST change
// day the clocks move at 02:00 or 03:00, after it).
func (d Date) In(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}
