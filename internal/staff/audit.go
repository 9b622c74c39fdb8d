package staff

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// Event kinds of the staff user directory, recorded in the events table
// with the actor (the admin in the console, Kadens for `kadens user
// create`) so the console's audit log shows who changed who may do what
// (docs/CONSOLE.md, "The audit log"). Subject /staffuser/{id}. No webhook
// delivers them: they are the merchant's own access log, not business
// events (webhook.Kinds leaves them out).
const (
	EventUserCreated        = "StaffUserCreated"
	EventUserChanged        = "StaffUserChanged"
	EventPasswordLinkIssued = "StaffPasswordLinkIssued"
	EventPasswordSet        = "StaffPasswordSet"
	EventTOTPEnabled        = "StaffTOTPEnabled"
	EventTOTPDisabled       = "StaffTOTPDisabled"
)

// auditData is what an event says about the user: who and what they may
// do, never a secret.
type auditData struct {
	StaffUserID string `json:"staffUserId"`
	Email       string `json:"email"`
	Role        Role   `json:"role"`
	Disabled    bool   `json:"disabled"`
	// Before is the role and state a StaffUserChanged changed.
	Before *auditBefore `json:"before,omitempty"`
}

type auditBefore struct {
	Role     Role `json:"role"`
	Disabled bool `json:"disabled"`
}

// audit records kind about u in tx at at.
func audit(ctx context.Context, tx *store.Tx, kind string, u User, before *auditBefore, at time.Time) error {
	return tx.AddEvent(ctx, kind, "/staffuser/"+u.ID, auditData{StaffUserID: u.ID, Email: u.Email, Role: u.Role, Disabled: u.Disabled, Before: before}, at)
}
