package store

import "time"

// The price changes' record. Their SQL is the catalog's
// (internal/catalogdb); the record stays here because the API answers
// with it (its schema is named after this type, and the contract's tests
// read it as store.PriceChange).

// Statuses of a price change.
const (
	PriceChangeScheduled = "Scheduled"
	PriceChangeStarted   = "Started"
	PriceChangeRevoked   = "Revoked"
)

// PriceChange moves every running series of a template to another
// template at each series' first renewal from EffectiveFrom on. It starts
// NoticeDays before EffectiveFrom (StartsAt): then it registers an
// OnRenewal change on each series and notifies its subscriber.
type PriceChange struct {
	ID                      string     `json:"id"`
	TemplatePackageID       string     `json:"templatePackageId" description:"The template whose running subscriptions move."`
	TargetTemplatePackageID string     `json:"targetTemplatePackageId" description:"The template they move to."`
	EffectiveFrom           time.Time  `json:"effectiveFrom" description:"Each subscription moves at its first renewal whose new period starts at or after this time."`
	NoticeDays              int        `json:"noticeDays"`
	StartsAt                time.Time  `json:"startsAt" description:"When subscribers are notified and the changes registered: noticeDays before effectiveFrom. Revocable until then."`
	Status                  string     `json:"status" enum:"Scheduled,Started,Revoked"`
	CreatedAt               time.Time  `json:"createdAt"`
	StartedAt               *time.Time `json:"startedAt"`
	RevokedAt               *time.Time `json:"revokedAt"`
	RegisteredSubscriptions int        `json:"registeredSubscriptions" description:"Series that got the change when it started."`
	SkippedSubscriptions    int        `json:"skippedSubscriptions" description:"Series left alone when it started: they had a plan change of their own pending, or never renew."`
}
