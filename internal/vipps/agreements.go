package vipps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Agreement statuses: Vipps' four, and NEW for a payment agreement whose
// draft Vipps has not answered yet.
const (
	StatusNew     = "NEW"
	StatusPending = "PENDING"
	StatusActive  = "ACTIVE"
	StatusStopped = "STOPPED"
	StatusExpired = "EXPIRED"
)

// MethodVipps is the payment method of Vipps agreements.
const MethodVipps = "Vipps"

// draftPrefix starts the reference Kadens drafts a new agreement under;
// importPrefix starts Vipps' own agreement ids.
const (
	draftPrefix  = "kvp-"
	importPrefix = "agr_"
)

// Transition is the agreement's state machine (docs/VIPPS.md, "Agreement
// states"): from the recorded status, Vipps reporting observed (a
// webhook, a poll, a draft's answer as PENDING), the status to record and
// whether the agreement just ended (collection stops: Kadens' payment
// agreement is deleted). STOPPED and EXPIRED are final: a late or
// replayed report of an earlier state changes nothing, so replays and
// out-of-order deliveries end in the same state. An ACTIVE agreement does
// not go back to PENDING (a stale report).
func Transition(from, observed string) (to string, ended bool) {
	final := func(s string) bool { return s == StatusStopped || s == StatusExpired }
	switch {
	case final(from):
		return from, false
	case final(observed):
		return observed, true
	case observed == StatusActive:
		return StatusActive, false
	case observed == StatusPending && from == StatusNew:
		return StatusPending, false
	}
	return from, false
}

// Check is the Vipps checker: the method is Vipps; an empty reference
// drafts a new agreement (Check gives it its draft key), an existing
// Vipps agreement id (agr_…) imports it, which must be ACTIVE at Vipps.
func (w *Wing) Check(ctx context.Context, a *provider.Agreement) error {
	var errs validation.Errors
	provider.FixedMethod(&errs, a, store.ProviderVipps, MethodVipps)
	if err := errs.Err(); err != nil {
		return err
	}
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	c, _, err := w.client(ctx, tenant)
	if errors.Is(err, ErrNoMerchant) {
		errs.Add("providerType", "Vipps needs the tenant's Vipps merchant first (PUT /vipps/merchant)")
		return errs.Err()
	}
	if err != nil {
		return err
	}
	switch ref := a.Reference; {
	case ref == "":
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		a.Reference = draftPrefix + hex.EncodeToString(b)
	case strings.HasPrefix(ref, importPrefix) && len(ref) <= 36:
		info, err := c.Agreement(ctx, ref)
		if IsStatus(err, http.StatusNotFound) {
			errs.Add(provider.FieldReference, "%q is no Vipps agreement of this merchant", ref)
			return errs.Err()
		}
		if err != nil {
			return fmt.Errorf("vipps: check agreement %s: %w", ref, err)
		}
		if info.Status != StatusActive {
			errs.Add(provider.FieldReference, "%q is %s at Vipps: only an ACTIVE agreement can be imported", ref, info.Status)
		}
	default:
		errs.Add(provider.FieldReference, "leave it empty to draft a new Vipps agreement, or give an existing Vipps agreement id (agr_…) to import it")
	}
	return errs.Err()
}

// AgreementCreated starts the Vipps side of payment agreement a: an
// import records the Vipps agreement; a new one is drafted under its
// reference as the Idempotency-Key, so a hook delivered again (or the
// poller retrying a NEW one) gets Vipps' first answer, never a second
// draft.
func (w *Wing) AgreementCreated(ctx context.Context, ref provider.AgreementRef) error {
	pa, err := w.st.PaymentAgreement(ctx, ref.AgreementID)
	if err != nil {
		return fmt.Errorf("vipps: agreement created: %w", err)
	}
	if pa.ProviderType != store.ProviderVipps {
		return nil
	}
	c, m, err := w.client(ctx, ref.TenantID)
	if err != nil {
		return err
	}
	now := ref.Now
	rec := VippsAgreement{PaymentAgreementID: pa.ID, Reference: pa.ProviderAgreementReference, Status: StatusNew,
		PricingType: "VARIABLE", Amount: m.MaxAmount, IntervalUnit: m.IntervalUnit, IntervalCount: m.IntervalCount}
	if strings.HasPrefix(pa.ProviderAgreementReference, importPrefix) {
		info, err := c.Agreement(ctx, pa.ProviderAgreementReference)
		if err != nil {
			return fmt.Errorf("vipps: import agreement %s: %w", pa.ProviderAgreementReference, err)
		}
		rec.VippsAgreementID, rec.Status = info.ID, StatusPending
		rec.PricingType, rec.IntervalUnit, rec.IntervalCount = info.Pricing.Type, info.Interval.Unit, info.Interval.Count
		rec.Amount = info.Pricing.Amount
		if info.Pricing.Type == "VARIABLE" {
			rec.Amount = info.Pricing.MaxAmount
		}
		if _, err := insertAgreement(ctx, w.st, ref.TenantID, rec, now); err != nil {
			return err
		}
		return w.apply(ctx, ref.TenantID, pa.ID, info.Status, now)
	}
	if _, err := insertAgreement(ctx, w.st, ref.TenantID, rec, now); err != nil {
		return err
	}
	return w.draft(ctx, c, m, ref.TenantID, pa, now)
}

// draft asks Vipps for the draft of a NEW agreement and records it.
func (w *Wing) draft(ctx context.Context, c *Client, m VippsMerchant, tenant string, pa store.PaymentAgreement, now time.Time) error {
	rec, err := AgreementOf(ctx, w.st, tenant, pa.ID)
	if err != nil {
		return err
	}
	if rec.Status != StatusNew {
		return nil
	}
	d, err := c.DraftAgreement(ctx, rec.Reference, DraftAgreement{
		Pricing:              Pricing{Type: rec.PricingType, SuggestedMaxAmount: rec.Amount, Currency: "NOK"},
		Interval:             Interval{Unit: rec.IntervalUnit, Count: rec.IntervalCount},
		MerchantAgreementURL: m.MerchantAgreementURL, MerchantRedirectURL: m.MerchantRedirectURL,
		ProductName: m.ProductName, ExternalID: pa.ID,
	})
	if err != nil {
		return fmt.Errorf("vipps: draft agreement for %s: %w", pa.ID, err)
	}
	return setDrafted(ctx, w.st, tenant, pa.ID, d.AgreementID, d.ConfirmationURL, now)
}

// SubscriptionEnded ends the payment agreement of a deactivated
// subscription when no live subscription uses it any more (the last
// period of every series on it is deactivated): a Vipps agreement is a
// subscription at Vipps, which the subscriber sees in the app, and one
// left running after the subscription ended would tell them they still
// pay. Ending it stops it at Vipps and deletes the payment agreement
// (PaymentAgreementDeleted): Vipps cannot restart a stopped agreement,
// so a returning subscriber approves a new one. Idempotent: a
// redelivered event finds it stopped.
func (w *Wing) SubscriptionEnded(ctx context.Context, ref provider.AgreementRef) error {
	rec, err := AgreementOf(ctx, w.st, ref.TenantID, ref.AgreementID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if rec.Status == StatusStopped || rec.Status == StatusExpired {
		return nil
	}
	live, err := liveSubscriptionsOn(ctx, w.st, ref.TenantID, ref.AgreementID)
	if err != nil || live > 0 {
		return err
	}
	return w.AgreementDeleted(ctx, ref)
}

// AgreementDeleted stops the Vipps agreement of a deleted payment
// agreement (cancelling the subscription's agreement, DELETE): Vipps
// cannot restart a stopped agreement, so this is final.
func (w *Wing) AgreementDeleted(ctx context.Context, ref provider.AgreementRef) error {
	rec, err := AgreementOf(ctx, w.st, ref.TenantID, ref.AgreementID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // not a Vipps agreement, or never started
	}
	if err != nil {
		return err
	}
	if rec.Status == StatusStopped || rec.Status == StatusExpired {
		return nil
	}
	if rec.VippsAgreementID != "" {
		c, _, err := w.client(ctx, ref.TenantID)
		if err != nil {
			return err
		}
		// The key is the reference's: every delivery of this hook sends
		// the same stop (at most 40 characters, Vipps' limit).
		if err := c.StopAgreement(ctx, rec.VippsAgreementID, "s-"+rec.Reference); err != nil {
			return fmt.Errorf("vipps: stop agreement %s: %w", rec.VippsAgreementID, err)
		}
	}
	return w.apply(ctx, ref.TenantID, ref.AgreementID, StatusStopped, ref.Now)
}

// apply records Vipps' status observed for payment agreement id, as
// Transition says, in one transaction: the status changes from the one
// read (compare and set, so a webhook and a poll racing apply it once),
// and an agreement that ended deletes its payment agreements
// (store.Tx.DeleteAgreementsOf: PaymentAgreementDeleted, the
// subscriptions move to the Invoice agreement and collection by Vipps
// stops).
func (w *Wing) apply(ctx context.Context, tenant, id, observed string, now time.Time) error {
	ctx = tenancy.With(ctx, tenant)
	return w.st.InTx(ctx, func(tx *store.Tx) error {
		var from, ref string
		if err := tx.QueryRow(ctx, `SELECT status, reference FROM vipps_agreements WHERE tenant_id = $1 AND payment_agreement_id = $2`,
			tenant, id).Scan(&from, &ref); err != nil {
			return fmt.Errorf("vipps: apply %s to %s: %w", observed, id, store.NotFound(err))
		}
		to, ended := Transition(from, observed)
		if to == from {
			return nil
		}
		res, err := tx.Exec(ctx, `UPDATE vipps_agreements SET status = $4, updated_at = $5
			WHERE tenant_id = $1 AND payment_agreement_id = $2 AND status = $3`, tenant, id, from, to, store.TimeParam(now))
		if err != nil {
			return fmt.Errorf("vipps: apply %s to %s: %w", observed, id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 || !ended {
			return nil
		}
		if _, err := tx.DeleteAgreementsOf(ctx, store.ProviderVipps, ref, now); err != nil {
			return fmt.Errorf("vipps: end agreement %s: %w", id, err)
		}
		return nil
	})
}

// Sync reads payment agreement id's Vipps agreement and applies its
// status (the poller's step, and what a webhook triggers).
func (w *Wing) Sync(ctx context.Context, tenant, id string, now time.Time) error {
	rec, err := AgreementOf(ctx, w.st, tenant, id)
	if err != nil {
		return err
	}
	if rec.VippsAgreementID == "" {
		return nil
	}
	c, _, err := w.client(ctx, tenant)
	if err != nil {
		return err
	}
	info, err := c.Agreement(ctx, rec.VippsAgreementID)
	if err != nil {
		return fmt.Errorf("vipps: sync agreement %s: %w", rec.VippsAgreementID, err)
	}
	if err := w.apply(ctx, tenant, id, info.Status, now); err != nil {
		return err
	}
	if info.Status != StatusActive {
		return nil
	}
	return w.chargeWaiting(ctx, tenant, id, now)
}

// chargeWaiting charges the invoices issued on payment agreement id
// while its Vipps agreement was not yet ACTIVE (the subscriber had not
// approved it in the app): InvoiceIssued skipped them then, and nothing
// else would charge them. Each is InvoiceIssued again, which makes one
// charge per invoice however often this runs (a charged one is left
// alone). Settled invoices are not among them.
func (w *Wing) chargeWaiting(ctx context.Context, tenant, id string, now time.Time) error {
	ids, err := openInvoicesOn(ctx, w.st, tenant, id)
	if err != nil {
		return err
	}
	var errs []error
	for _, inv := range ids {
		if err := w.InvoiceIssued(ctx, provider.Invoice{TenantID: tenant, InvoiceID: inv, Now: now}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PollAll reconciles every open agreement of every tenant with a
// merchant: NEW ones are drafted (a hook that failed), the others read
// from Vipps. One agreement's failure is collected and the rest go on;
// the errors come back joined.
func (w *Wing) PollAll(ctx context.Context, now func(tenant string) time.Time) error {
	tenants, err := merchantTenants(ctx, w.st)
	if err != nil {
		return err
	}
	var errs []error
	for _, tenant := range tenants {
		tctx := tenancy.With(ctx, tenant)
		open, err := openAgreements(tctx, w.st, tenant)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, rec := range open {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var err error
			if rec.Status == StatusNew {
				err = w.AgreementCreated(tctx, provider.AgreementRef{TenantID: tenant, AgreementID: rec.PaymentAgreementID, Now: now(tenant)})
			} else {
				err = w.Sync(tctx, tenant, rec.PaymentAgreementID, now(tenant))
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if err := w.PollCharges(tctx, tenant, now(tenant)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
