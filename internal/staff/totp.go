package staff

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// totpOpts are the codes' settings: RFC 6238's defaults, which every
// authenticator app reads from the otpauth URL (30-second steps, six
// digits, HMAC-SHA1), accepting the step before and after the current one
// for clock drift.
var totpOpts = totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// codeStep returns the time step (Unix seconds / 30) whose code secret's
// code is, among t's step and the one before and after it, or -1 when it
// is none of them. The caller refuses a step not after the last one
// accepted, so every code is good once. The codes come from pquerna/otp;
// this only picks which step matched, which its Validate does not say.
func codeStep(code, secret string, t time.Time) int64 {
	if len(code) != totpOpts.Digits.Length() {
		return -1
	}
	period := int64(totpOpts.Period)
	now := t.Unix() / period
	found := int64(-1)
	for off := -int64(totpOpts.Skew); off <= int64(totpOpts.Skew); off++ {
		want, err := totp.GenerateCodeCustom(secret, time.Unix((now+off)*period, 0).UTC(), totpOpts)
		if err != nil {
			return -1
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			found = now + off
		}
	}
	return found
}

// BeginTOTP starts TOTP enrolment for tenantID's user userID: a new secret
// (from crypto/rand, through pquerna/otp) kept pending until ConfirmTOTP
// sees a code made with it, and the otpauth:// URL an authenticator app
// reads (the console shows it as a QR code), labelled issuer and the
// user's e-mail. Beginning again replaces the pending secret; a secret
// already confirmed stays in force until the new one is confirmed.
func (d *Directory) BeginTOTP(ctx context.Context, tenantID, userID, issuer string) (string, string, error) {
	if issuer == "" {
		return "", "", validation.Field("issuer", "is required")
	}
	u, err := user(ctx, d.st.Reader(), tenantID, userID)
	if err != nil {
		return "", "", err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: u.Email, Period: totpOpts.Period,
		Digits: totpOpts.Digits, Algorithm: totpOpts.Algorithm})
	if err != nil {
		return "", "", fmt.Errorf("staff: begin TOTP: %w", err)
	}
	if err := d.setTOTP(ctx, tenantID, userID, "", `UPDATE staff_users SET totp_pending_secret = $4, updated_at = $3
		WHERE tenant_id = $1 AND id = $2`, key.Secret()); err != nil {
		return "", "", err
	}
	return key.Secret(), key.URL(), nil
}

// ConfirmTOTP checks code against the pending secret of BeginTOTP and, if
// it is right, makes it the user's second factor: later logins ask for a
// code. A wrong code, or no enrolment begun, is ErrBadCredentials.
func (d *Directory) ConfirmTOTP(ctx context.Context, tenantID, userID, code string) error {
	u, err := user(ctx, d.st.Writer(), tenantID, userID)
	if err != nil {
		return err
	}
	step := int64(-1)
	if u.totpPending != "" {
		step = codeStep(code, u.totpPending, d.now())
	}
	if step < 0 {
		return ErrBadCredentials
	}
	// Conditional on the secret checked: a BeginTOTP in between wins. The
	// confirming code counts as used: it cannot also complete a login.
	err = d.setTOTP(ctx, tenantID, userID, EventTOTPEnabled, `UPDATE staff_users SET totp_secret = totp_pending_secret,
		totp_pending_secret = '', totp_last_step = $5, updated_at = $3
		WHERE tenant_id = $1 AND id = $2 AND totp_pending_secret = $4`, u.totpPending, step)
	if errors.Is(err, store.ErrNotFound) {
		return ErrBadCredentials
	}
	return err
}

// DisableTOTP removes tenantID's user userID's second factor (confirmed
// or pending): logins ask for the password only. The console lets an
// admin do it for a user who lost the device.
func (d *Directory) DisableTOTP(ctx context.Context, tenantID, userID string) error {
	return d.setTOTP(ctx, tenantID, userID, EventTOTPDisabled, `UPDATE staff_users SET totp_secret = '', totp_pending_secret = '',
		updated_at = $3 WHERE tenant_id = $1 AND id = $2`)
}

// setTOTP runs query, an UPDATE of one staff_users row whose parameters
// are the tenant ($1), the user ($2), updated_at ($3) and args from $4,
// records event (none when "") about the user in the same transaction,
// and reports no row changed as store.ErrNotFound.
func (d *Directory) setTOTP(ctx context.Context, tenantID, userID, event, query string, args ...any) error {
	if !store.ValidID(tenantID) || !store.ValidID(userID) {
		return store.ErrNotFound
	}
	now := d.now()
	err := d.inTx(ctx, tenantID, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, query, append([]any{tenantID, userID, store.TimeParam(now)}, args...)...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return store.ErrNotFound
		}
		if event == "" {
			return nil
		}
		u, err := user(ctx, tx, tenantID, userID)
		if err != nil {
			return err
		}
		return audit(ctx, tx, event, u.User, nil, now)
	})
	if err != nil {
		return fmt.Errorf("staff: TOTP of user %s: %w", userID, err)
	}
	return nil
}
