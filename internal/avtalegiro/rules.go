// Package avtalegiro is Norwegian AvtaleGiro in Kadens: the rules for
// accounts, mandates and claims, the billing integration (claims for
// invoices of subscriptions on an AvtaleGiro agreement, cancellation when
// an invoice is credited, settlement of OCR giro payments through the
// payment path), and the bank-side interface. The file format is in
// ocrgiro, the SQL in internal/store. docs/AVTALEGIRO.md says how it fits.
package avtalegiro

import (
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/bankday"
	"github.com/kadens/kadens/internal/billing"
)

// Zone is the time zone of Norwegian banking dates.
var Zone = mustZone("Europe/Oslo")

func mustZone(name string) *time.Location {
	z, err := time.LoadLocation(name)
	if err != nil {
		return time.FixedZone("CET", 3600)
	}
	return z
}

// Today returns the Norwegian date at now.
func Today(now time.Time) time.Time {
	y, m, d := now.In(Zone).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// DefaultLeadDays is how many banking days before the due date a claim
// file reaches the bank unless the account says otherwise: Nets wants
// claims by 14:00 four calendar days ahead, which a file sent a few
// banking days ahead always meets.
const DefaultLeadDays = 4

// MaxAhead is how far ahead a claim may be due: Nets refuses due dates
// more than 12 months ahead.
const MaxAhead = 12

// EarliestDue is the earliest due date a claim created at now can have on
// an account with leadDays: leadDays Norwegian banking days after today.
func EarliestDue(now time.Time, leadDays int) time.Time {
	return bankday.Norway.After(bankday.Norway.Next(Today(now)), leadDays)
}

// CheckDue returns why due cannot be a claim's due date at now, or "".
func CheckDue(due, now time.Time, leadDays int) string {
	today := Today(now)
	switch {
	case due.Before(today):
		return "is in the past"
	case due.Before(EarliestDue(now, leadDays)):
		return fmt.Sprintf("is too soon: the bank needs %d Norwegian banking days, so the earliest due date is %s",
			leadDays, EarliestDue(now, leadDays).Format(time.DateOnly))
	case due.After(today.AddDate(0, MaxAhead, 0)):
		return fmt.Sprintf("is more than %d months ahead", MaxAhead)
	}
	return ""
}

// CheckKID returns why kid is not a KID of account a, or "".
func CheckKID(a AvtaleGiroAccount, kid string) string {
	if len(kid) != a.KIDLength {
		return fmt.Sprintf("must be %d digits (the account's KID length)", a.KIDLength)
	}
	if !billing.ValidKID(kid, a.KIDAlgorithm) {
		return fmt.Sprintf("does not end in its %s check digit", a.KIDAlgorithm)
	}
	return ""
}
