package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// The reads below serve a page of payment demands with the fields
// INFO-Subscription clients read (orderId, billingPlanId, settlement):
// one statement per kind of fact (per maxChunk ids) for the whole page,
// where reading them demand by demand took three or four statements each.

// SubscriptionOrigin is what a demand's view needs of its subscription.
type SubscriptionOrigin struct {
	OrderID *string
	// BillingPlanID is the billing plan of the subscription's package; ""
	// when the package names none.
	BillingPlanID string
}

// SubscriptionOrigins reads the order and billing plan of the context's
// tenant's subscriptions ids, keyed by subscription id. Ids the tenant does
// not have are left out.
func (s *Store) SubscriptionOrigins(ctx context.Context, ids []string) (map[string]SubscriptionOrigin, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]SubscriptionOrigin, len(ids))
	// Only the plan's id is decoded, once per distinct package text: a
	// page's subscriptions share a handful of packages.
	plans := map[string]string{}
	err = eachChunk(distinctIDs(ids), func(chunk []string) error {
		list, args := inList(chunk, 2)
		rows, err := s.r.QueryContext(ctx, `SELECT s.id, s.order_id, sp.package FROM subscriptions s
			JOIN subscription_packages sp ON sp.tenant_id = s.tenant_id AND sp.hash = s.package_hash
			WHERE s.tenant_id = $1 AND s.id IN `+list, append([]any{tenant}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id, pkg string
				order   sql.NullString
			)
			if err := rows.Scan(&id, &order, &pkg); err != nil {
				return err
			}
			plan, ok := plans[pkg]
			if !ok {
				var p struct {
					BillingPlan struct {
						BillingPlanID string `json:"billingPlanId"`
					} `json:"billingPlan"`
				}
				if err := json.Unmarshal([]byte(pkg), &p); err != nil {
					return fmt.Errorf("subscription %s package: %w", id, err)
				}
				plan = p.BillingPlan.BillingPlanID
				plans[pkg] = plan
			}
			out[id] = SubscriptionOrigin{OrderID: nullString(order), BillingPlanID: plan}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: subscription origins: %w", err)
	}
	return out, nil
}

// AppliedPayment is a succeeded payment as settling its demand saw it.
type AppliedPayment struct {
	PaymentID string
	Applied   catalog.Amount
	PaidAt    time.Time
}

// SucceededPayments reads the succeeded payments of the context's tenant's
// payment demands ids, keyed by demand id, each demand's in id order (the
// order of ListPayments). Demands without one are left out.
func (s *Store) SucceededPayments(ctx context.Context, demandIDs []string) (map[string][]AppliedPayment, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]AppliedPayment{}
	err = eachChunk(distinctIDs(demandIDs), func(chunk []string) error {
		list, args := inList(chunk, 3)
		rows, err := s.r.QueryContext(ctx, `SELECT payment_demand_id, id, applied, currency, paid_at FROM payments
			WHERE tenant_id = $1 AND status = $2 AND payment_demand_id IN `+list+` ORDER BY payment_demand_id, id`,
			append([]any{tenant, PaymentSucceeded}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				demand, currency string
				p                AppliedPayment
				applied          int64
			)
			if err := rows.Scan(&demand, &p.PaymentID, &applied, &currency, &p.PaidAt); err != nil {
				return err
			}
			cur, err := currencyOf(currency)
			if err != nil {
				return err
			}
			p.Applied, p.PaidAt = catalog.NewAmount(applied, cur), p.PaidAt.UTC()
			out[demand] = append(out[demand], p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: succeeded payments: %w", err)
	}
	return out, nil
}

// AllowanceLine is an allowance line of an invoice: the account item it
// applied and its (negative) gross.
type AllowanceLine struct {
	AccountItemID *string
	Gross         catalog.Amount
}

// AllowanceLines reads the allowance lines of the context's tenant's
// invoices ids, keyed by invoice id, each invoice's in line order. Every
// invoice found has an entry, empty when it has no allowance line, so a
// missing entry means no such invoice.
func (s *Store) AllowanceLines(ctx context.Context, invoiceIDs []string) (map[string][]AllowanceLine, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]AllowanceLine, len(invoiceIDs))
	err = eachChunk(distinctIDs(invoiceIDs), func(chunk []string) error {
		list, args := inList(chunk, 2)
		rows, err := s.r.QueryContext(ctx, `SELECT id, lines FROM invoices WHERE tenant_id = $1 AND id IN `+list,
			append([]any{tenant}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id, text string
				lines    []billing.Line
			)
			if err := rows.Scan(&id, &text); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(text), &lines); err != nil {
				return fmt.Errorf("invoice %s: %w", id, err)
			}
			found := []AllowanceLine{}
			for _, l := range lines {
				if l.Kind == billing.LineAllowance {
					found = append(found, AllowanceLine{AccountItemID: l.AccountItemID, Gross: l.Gross})
				}
			}
			out[id] = found
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: allowance lines: %w", err)
	}
	return out, nil
}

// distinctIDs is ids without repeats, in first-seen order.
func distinctIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// eachChunk calls read with ids maxChunk at a time (none for no ids: an
// empty IN list is not SQL).
func eachChunk(ids []string, read func([]string) error) error {
	for len(ids) > 0 {
		n := min(len(ids), maxChunk)
		if err := read(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}
