// Package reporting computes the merchant console's dashboard figures in
// SQL on the store's read pool (docs/CONSOLE.md, "The dashboard"): MRR and
// its movements per month, active subscriptions per package, churn,
// invoices outstanding by age, payments by provider per month and the
// dunning funnel. It owns its SQL (one text per engine where they differ)
// on the store's query kit, reads only, and is called through
// internal/app (App.Dashboard), as the analytics API reads the same rows
// through OData. Every statement is scoped by the tenant id given.
package reporting

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

// Months is how many months the dashboard shows: the current month (to
// date) and the eleven before it.
const Months = 12

// Month is one month's MRR and its movements in one currency, in minor
// units. End = Start + New + Expansion + Reactivation − Contraction − Churn.
type Month struct {
	Start    time.Time // the month's first instant (local midnight)
	Currency string
	// MRRStart is the MRR at the month's start, MRREnd at its end (the
	// next month's start; for the current month the time asked about).
	MRRStart, MRREnd                                     int64
	New, Expansion, Contraction, Churn, Reactivation     int64
	SubscribersStart, SubscribersEnd, ChurnedSubscribers int64
}

// PackageCount is the active subscriptions of one package name.
type PackageCount struct {
	Package  string
	Currency string
	Count    int64
	MRR      int64
}

// AgeBucket is what is outstanding at one age: overdue days from..to
// (To −1: no upper bound; 0..0 is "not due yet").
type AgeBucket struct {
	From, To int
	Currency string
	Count    int64
	Amount   int64
}

// Buckets are the outstanding-by-age buckets, in order.
var Buckets = [][2]int{{0, 0}, {1, 30}, {31, 60}, {61, 90}, {91, -1}}

// ProviderMonth is the succeeded payments of one provider in one month.
type ProviderMonth struct {
	Start    time.Time
	Provider string
	Currency string
	Count    int64
	Amount   int64
}

// Funnel is the dunning funnel over the demands that fell due in the
// window [WindowStart, At) and went overdue (a reminder was sent, or it
// is still to be paid): how many, how many got reminder n
// (Reminders[n−1]), how many were paid after a reminder, and how many
// ended in a payment stop.
type Funnel struct {
	Overdue           int64
	Reminders         []int64
	PaidAfterReminder int64
	// PaymentStopped are those whose subscription period a dunning
	// process stopped (cancel reason PaymentStop).
	PaymentStopped int64
}

// Dashboard is every figure of the dashboard at one time.
type Dashboard struct {
	At       time.Time
	Months   []Month
	Packages []PackageCount
	Ages     []AgeBucket
	Payments []ProviderMonth
	Funnel   Funnel
	// WindowStart is the first month's start: the funnel and the payments
	// cover [WindowStart, At).
	WindowStart time.Time
}

// Points are the instants the MRR is taken at: the start of each of the
// last Months months in zone, and at.
func Points(at time.Time, zone *time.Location) []time.Time {
	l := at.In(zone)
	first := time.Date(l.Year(), l.Month()-Months+1, 1, 0, 0, 0, 0, zone)
	out := make([]time.Time, 0, Months+1)
	for i := range Months {
		out = append(out, time.Date(first.Year(), first.Month()+time.Month(i), 1, 0, 0, 0, 0, zone).UTC())
	}
	return append(out, at.UTC())
}

// Reports reads the dashboard's figures from a store's read pool.
type Reports struct {
	db       store.Pool
	postgres bool
}

// New returns reports over s's read pool.
func New(s *store.Store) *Reports {
	return &Reports{db: s.Reader(), postgres: s.Engine() == store.Postgres}
}

// Dashboard computes every figure for tenant at time at, months counted
// in zone.
func (r *Reports) Dashboard(ctx context.Context, tenant string, at time.Time, zone *time.Location) (Dashboard, error) {
	pts := Points(at, zone)
	d := Dashboard{At: at.UTC(), WindowStart: pts[0]}
	var err error
	if d.Months, err = r.months(ctx, tenant, pts); err != nil {
		return Dashboard{}, fmt.Errorf("reporting: mrr: %w", err)
	}
	if d.Packages, err = r.packages(ctx, tenant, at); err != nil {
		return Dashboard{}, fmt.Errorf("reporting: packages: %w", err)
	}
	if d.Ages, err = r.ages(ctx, tenant, at); err != nil {
		return Dashboard{}, fmt.Errorf("reporting: ages: %w", err)
	}
	if d.Payments, err = r.payments(ctx, tenant, pts); err != nil {
		return Dashboard{}, fmt.Errorf("reporting: payments: %w", err)
	}
	if d.Funnel, err = r.funnel(ctx, tenant, pts[0], at); err != nil {
		return Dashboard{}, fmt.Errorf("reporting: funnel: %w", err)
	}
	return d, nil
}

// ts is a timestamp parameter: typed on PostgreSQL (a VALUES list would
// not know it), the stored text form on SQLite.
func (r *Reports) ts(n int) string {
	if r.postgres {
		return fmt.Sprintf("CAST($%d AS timestamptz)", n)
	}
	return fmt.Sprintf("$%d", n)
}

// minorCase turns a JSON amount in major units (expression e) into minor
// units of the currency in column cur, exactly (rounded: the JSON holds
// exactly the currency's digits).
func (r *Reports) minorCase(e, cur string) string {
	by := money.CodesByDigits()
	digits := make([]int, 0, len(by))
	for n := range by {
		digits = append(digits, n)
	}
	sort.Ints(digits)
	var b strings.Builder
	b.WriteString("CAST(ROUND(" + e + " * CASE")
	for _, n := range digits {
		if n == 2 {
			continue
		}
		fmt.Fprintf(&b, " WHEN %s IN ('%s') THEN %d", cur, strings.Join(by[n], "','"), pow10(n))
	}
	b.WriteString(" ELSE 100 END) AS BIGINT)")
	return b.String()
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// packageLines is a FROM item with one row per product line (included and
// additional) of each of the tenant's package documents: hash, currency,
// amount (major units, as the JSON has it), vat_rate.
func (r *Reports) packageLines() string {
	if r.postgres {
		arr := func(k string) string {
			return "CASE WHEN jsonb_typeof(CAST(sp.package AS jsonb) -> '" + k + "') = 'array' THEN CAST(sp.package AS jsonb) -> '" + k + "' ELSE '[]'::jsonb END"
		}
		return `(SELECT sp.hash, CAST(sp.package AS jsonb) ->> 'currency' AS currency, CAST(l ->> 'amount' AS numeric) AS amount,
  CAST(l ->> 'vatRate' AS numeric) AS vat_rate
 FROM subscription_packages sp, jsonb_array_elements(` + arr("products") + ` || ` + arr("additionalProducts") + `) AS l
 WHERE sp.tenant_id = $1)`
	}
	return `(SELECT sp.hash, json_extract(sp.package, '$.currency') AS currency, json_extract(l.value, '$.amount') AS amount,
  json_extract(l.value, '$.vatRate') AS vat_rate
 FROM subscription_packages sp, json_each(sp.package, '$.products') l WHERE sp.tenant_id = $1 AND l.type = 'object'
 UNION ALL
 SELECT sp.hash, json_extract(sp.package, '$.currency'), json_extract(l.value, '$.amount'), json_extract(l.value, '$.vatRate')
 FROM subscription_packages sp, json_each(sp.package, '$.additionalProducts') l WHERE sp.tenant_id = $1 AND l.type = 'object')`
}

// packagesCTE is "pkg": per package document its gross price per period
// (the lines' amounts), the VAT in it were the prices gross (per line
// gross × R / (10⁶ + R) rounded half away from zero, R the rate × 10⁴:
// money.SplitGross in integers), its name and its billing plan's interval
// as a month fraction num/den (Month 1/n, Year 1/12n, Week 13/3n, Day
// 365/12n).
func (r *Reports) packagesCTE() string {
	rate := "CAST(ROUND(l.vat_rate * 10000) AS BIGINT)"
	gross := r.minorCase("l.amount", "l.currency")
	vat := "(2 * " + gross + " * " + rate + " + (1000000 + " + rate + ")) / (2 * (1000000 + " + rate + "))"
	unit, count, name := "json_extract(sp.package, '$.billingPlan.intervalUnit')", "CAST(json_extract(sp.package, '$.billingPlan.intervalCount') AS BIGINT)", "json_extract(sp.package, '$.name')"
	if r.postgres {
		unit, count, name = "(CAST(sp.package AS jsonb) #>> '{billingPlan,intervalUnit}')", "CAST(CAST(sp.package AS jsonb) #>> '{billingPlan,intervalCount}' AS BIGINT)", "(CAST(sp.package AS jsonb) ->> 'name')"
	}
	return `lines AS (SELECT l.hash, CAST(SUM(` + gross + `) AS BIGINT) AS gross, CAST(SUM(` + vat + `) AS BIGINT) AS vat FROM ` + r.packageLines() + ` l GROUP BY l.hash),
pkg AS (SELECT sp.hash, ` + name + ` AS name, COALESCE(lines.gross, 0) AS gross, COALESCE(lines.vat, 0) AS vat,
  CASE ` + unit + ` WHEN 'Year' THEN 1 WHEN 'Week' THEN 13 WHEN 'Day' THEN 365 ELSE 1 END AS num,
  CASE ` + unit + ` WHEN 'Year' THEN 12 WHEN 'Week' THEN 3 WHEN 'Day' THEN 12 ELSE 1 END * ` + count + ` AS den
 FROM subscription_packages sp LEFT JOIN lines ON lines.hash = sp.hash WHERE sp.tenant_id = $1)`
}

// mrrExpr is a period's MRR from its package (pkg p) and organization
// (o): the net price per period times num/den, rounded half up.
const mrrExpr = `((2 * (CASE WHEN o.prices_include_vat THEN p.gross - p.vat ELSE p.gross END) * p.num + p.den) / (2 * p.den))`

// active is the condition that period s is active at instant t (the
// API's status Active: internal/substatus).
func active(t string) string {
	return "s.period_start <= " + t + " AND s.period_end > " + t + " AND (s.cancel_effective_at IS NULL OR s.cancel_effective_at > " + t + ")"
}

const periodJoins = ` JOIN pkg p ON p.hash = s.package_hash JOIN organizations o ON o.tenant_id = s.tenant_id AND o.id = s.organization_id`

func (r *Reports) months(ctx context.Context, tenant string, pts []time.Time) ([]Month, error) {
	args := []any{tenant}
	var vals []string
	for i, t := range pts {
		args = append(args, store.TimeParam(t))
		vals = append(vals, fmt.Sprintf("(%d, %s)", i, r.ts(len(args))))
	}
	q := `WITH ` + r.packagesCTE() + `,
points (k, t) AS (VALUES ` + strings.Join(vals, ", ") + `),
snap AS (SELECT pt.k, s.subscriber_id, s.currency, CAST(SUM(` + mrrExpr + `) AS BIGINT) AS mrr
 FROM points pt JOIN subscriptions s ON s.tenant_id = $1 AND ` + active("pt.t") + periodJoins + `
 GROUP BY pt.k, s.subscriber_id, s.currency),
pairs AS (SELECT m.k, m.t, s.subscriber_id, s.currency,
  SUM(CASE WHEN s.k = m.k THEN s.mrr ELSE 0 END) AS before, SUM(CASE WHEN s.k = m.k + 1 THEN s.mrr ELSE 0 END) AS after,
  SUM(CASE WHEN s.k = m.k THEN 1 ELSE 0 END) AS was, SUM(CASE WHEN s.k = m.k + 1 THEN 1 ELSE 0 END) AS is_now
 FROM points m JOIN snap s ON s.k = m.k OR s.k = m.k + 1 WHERE m.k < ` + fmt.Sprint(len(pts)-1) + `
 GROUP BY m.k, m.t, s.subscriber_id, s.currency)
SELECT k, currency, CAST(SUM(before) AS BIGINT), CAST(SUM(after) AS BIGINT),
 CAST(SUM(CASE WHEN was = 0 AND NOT EXISTS (SELECT 1 FROM subscriptions x WHERE x.tenant_id = $1 AND x.subscriber_id = pairs.subscriber_id
   AND x.currency = pairs.currency AND x.period_start < pairs.t) THEN after ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN was > 0 AND is_now > 0 AND after > before THEN after - before ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN was > 0 AND is_now > 0 AND after < before THEN before - after ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN was > 0 AND is_now = 0 THEN before ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN was = 0 THEN after ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN was > 0 THEN 1 ELSE 0 END) AS BIGINT), CAST(SUM(CASE WHEN is_now > 0 THEN 1 ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN was > 0 AND is_now = 0 THEN 1 ELSE 0 END) AS BIGINT)
FROM pairs GROUP BY k, currency ORDER BY currency, k`
	rows, err := r.db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byKey := map[string]*Month{}
	var currencies []string
	for rows.Next() {
		var k int
		var m Month
		var returned int64
		if err := rows.Scan(&k, &m.Currency, &m.MRRStart, &m.MRREnd, &m.New, &m.Expansion, &m.Contraction, &m.Churn, &returned,
			&m.SubscribersStart, &m.SubscribersEnd, &m.ChurnedSubscribers); err != nil {
			return nil, err
		}
		// Everything that arrived without being there at the start and
		// is not new returned.
		m.Reactivation = returned - m.New
		m.Start = pts[k]
		if _, ok := byKey[m.Currency]; !ok {
			currencies = append(currencies, m.Currency)
		}
		byKey[fmt.Sprint(m.Currency, k)] = &m
		byKey[m.Currency] = &m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Every month of every currency, months without a row as zeros.
	var out []Month
	for _, c := range currencies {
		for k := range len(pts) - 1 {
			if m, ok := byKey[fmt.Sprint(c, k)]; ok {
				out = append(out, *m)
			} else {
				out = append(out, Month{Start: pts[k], Currency: c})
			}
		}
	}
	return out, nil
}

func (r *Reports) packages(ctx context.Context, tenant string, at time.Time) ([]PackageCount, error) {
	q := `WITH ` + r.packagesCTE() + `
SELECT COALESCE(p.name, ''), s.currency, COUNT(*), CAST(SUM(` + mrrExpr + `) AS BIGINT) FROM subscriptions s` + periodJoins + `
WHERE s.tenant_id = $1 AND ` + active("$2") + ` GROUP BY p.name, s.currency ORDER BY COUNT(*) DESC, p.name, s.currency`
	return store.QueryAll(ctx, r.db, func(sc store.Scanner) (PackageCount, error) {
		var p PackageCount
		return p, sc.Scan(&p.Package, &p.Currency, &p.Count, &p.MRR)
	}, q, tenant, store.TimeParam(at))
}

// outstanding is the condition and amount of a demand that is still to
// be paid.
const (
	outstandingCond = `d.status NOT IN ('Paid', 'Credited') AND d.amount - d.paid_amount - d.credited_amount > 0`
	outstandingAmt  = `d.amount - d.paid_amount - d.credited_amount`
)

// ageBounds are the due-time conditions of overdue days from..to at the
// parameters: days overdue is 0 while due_at ≥ at, else the days since
// due_at rounded up (the first 24 hours are day 1).
func ageBounds(from, to int, at time.Time, args *[]any) string {
	var conds []string
	add := func(cond string, t time.Time) {
		*args = append(*args, store.TimeParam(t))
		conds = append(conds, fmt.Sprintf(cond, len(*args)))
	}
	if from >= 1 {
		add("d.due_at < $%d", at.Add(-time.Duration(from-1)*24*time.Hour))
	}
	if to >= 0 {
		add("d.due_at >= $%d", at.Add(-time.Duration(to)*24*time.Hour))
	}
	if len(conds) == 0 {
		return "1 = 1"
	}
	return strings.Join(conds, " AND ")
}

func (r *Reports) ages(ctx context.Context, tenant string, at time.Time) ([]AgeBucket, error) {
	args := []any{tenant}
	var cases []string
	for i, b := range Buckets {
		cases = append(cases, fmt.Sprintf("WHEN %s THEN %d", ageBounds(b[0], b[1], at, &args), i))
	}
	q := `SELECT b, currency, COUNT(*), CAST(SUM(amt) AS BIGINT) FROM (SELECT CASE ` + strings.Join(cases, " ") + ` END AS b, d.currency, ` + outstandingAmt + ` AS amt
 FROM payment_demands d WHERE d.tenant_id = $1 AND ` + outstandingCond + `) x GROUP BY b, currency ORDER BY currency, b`
	got, err := store.QueryAll(ctx, r.db, func(sc store.Scanner) (AgeBucket, error) {
		var a AgeBucket
		var i int
		err := sc.Scan(&i, &a.Currency, &a.Count, &a.Amount)
		a.From, a.To = Buckets[i][0], Buckets[i][1]
		return a, err
	}, q, args...)
	if err != nil {
		return nil, err
	}
	// Every bucket of every currency, empty ones as zeros.
	var out []AgeBucket
	var cur string
	for _, a := range got {
		if a.Currency != cur {
			cur = a.Currency
			for _, b := range Buckets {
				out = append(out, AgeBucket{From: b[0], To: b[1], Currency: cur})
			}
		}
		for i := len(out) - len(Buckets); i < len(out); i++ {
			if out[i].From == a.From {
				out[i] = a
			}
		}
	}
	return out, nil
}

// Outstanding is one demand still to be paid, for the list behind an age
// bucket.
type Outstanding struct {
	InvoiceID     string
	InvoiceNumber int64
	SubscriberID  string
	Subscriber    string
	Currency      string
	DueAt         time.Time
	Amount        int64 // what is left to pay, minor units
	Reminders     int64
}

// OutstandingList is the demands still to be paid whose overdue days at
// at are from..to (to −1: no bound), oldest due first, at most limit.
func (r *Reports) OutstandingList(ctx context.Context, tenant string, at time.Time, from, to, limit int) ([]Outstanding, error) {
	args := []any{tenant}
	cond := ageBounds(from, to, at, &args)
	args = append(args, limit)
	q := `SELECT i.id, i.invoice_number, d.subscriber_id, sb.name, d.currency, d.due_at, ` + outstandingAmt + `, d.reminders_sent
 FROM payment_demands d JOIN invoices i ON i.tenant_id = d.tenant_id AND i.id = d.invoice_id
 JOIN subscribers sb ON sb.tenant_id = d.tenant_id AND sb.id = d.subscriber_id
 WHERE d.tenant_id = $1 AND ` + outstandingCond + ` AND ` + cond + ` ORDER BY d.due_at, i.invoice_number LIMIT $` + fmt.Sprint(len(args))
	return store.QueryAll(ctx, r.db, func(sc store.Scanner) (Outstanding, error) {
		var o Outstanding
		var due store.AnyTime
		err := sc.Scan(&o.InvoiceID, &o.InvoiceNumber, &o.SubscriberID, &o.Subscriber, &o.Currency, &due, &o.Amount, &o.Reminders)
		if due.T != nil {
			o.DueAt = due.T.UTC()
		}
		return o, err
	}, q, args...)
}

func (r *Reports) payments(ctx context.Context, tenant string, pts []time.Time) ([]ProviderMonth, error) {
	args := []any{tenant}
	var vals []string
	for i := range len(pts) - 1 {
		args = append(args, store.TimeParam(pts[i]), store.TimeParam(pts[i+1]))
		vals = append(vals, fmt.Sprintf("(%d, %s, %s)", i, r.ts(len(args)-1), r.ts(len(args))))
	}
	q := `WITH months (k, f, u) AS (VALUES ` + strings.Join(vals, ", ") + `)
SELECT m.k, y.provider, y.currency, COUNT(*), CAST(SUM(y.amount) AS BIGINT) FROM months m JOIN payments y
 ON y.tenant_id = $1 AND y.status = 'Succeeded' AND y.paid_at >= m.f AND y.paid_at < m.u
GROUP BY m.k, y.provider, y.currency ORDER BY y.currency, y.provider, m.k`
	return store.QueryAll(ctx, r.db, func(sc store.Scanner) (ProviderMonth, error) {
		var p ProviderMonth
		var k int
		err := sc.Scan(&k, &p.Provider, &p.Currency, &p.Count, &p.Amount)
		p.Start = pts[k]
		return p, err
	}, q, args...)
}

// MaxReminderSteps bounds the funnel's reminder steps shown.
const MaxReminderSteps = 9

func (r *Reports) funnel(ctx context.Context, tenant string, from, at time.Time) (Funnel, error) {
	var steps []string
	for n := 1; n <= MaxReminderSteps; n++ {
		steps = append(steps, fmt.Sprintf("CAST(SUM(CASE WHEN d.reminders_sent >= %d THEN 1 ELSE 0 END) AS BIGINT)", n))
	}
	q := `SELECT COUNT(*), CAST(SUM(CASE WHEN d.reminders_sent > 0 AND d.status = 'Paid' THEN 1 ELSE 0 END) AS BIGINT),
 CAST(SUM(CASE WHEN EXISTS (SELECT 1 FROM subscriptions s WHERE s.tenant_id = d.tenant_id AND s.id = d.subscription_id
   AND s.cancel_reason = 'PaymentStop') THEN 1 ELSE 0 END) AS BIGINT), ` + strings.Join(steps, ", ") + `
 FROM payment_demands d WHERE d.tenant_id = $1 AND d.due_at >= $2 AND d.due_at < $3
 AND (d.reminders_sent > 0 OR (` + outstandingCond + `))`
	dest := make([]any, 3+MaxReminderSteps)
	var f Funnel
	var overdue, paid, stopped *int64
	dest[0], dest[1], dest[2] = &overdue, &paid, &stopped
	counts := make([]*int64, MaxReminderSteps)
	for i := range counts {
		dest[3+i] = &counts[i]
	}
	if err := r.db.QueryRow(ctx, q, tenant, store.TimeParam(from), store.TimeParam(at)).Scan(dest...); err != nil {
		return Funnel{}, err
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	f.Overdue, f.PaidAfterReminder, f.PaymentStopped = val(overdue), val(paid), val(stopped)
	for _, c := range counts {
		if val(c) == 0 {
			break
		}
		f.Reminders = append(f.Reminders, val(c))
	}
	return f, nil
}

// ActivePeriod is one period active at an instant with its MRR, for the
// lists behind the MRR and package charts.
type ActivePeriod struct {
	SubscriptionID string
	SubscriberID   string
	Subscriber     string
	Package        string
	Currency       string
	PeriodStart    time.Time
	PeriodEnd      time.Time
	MRR            int64
}

// ActiveList is the periods active at at (of the package named pkg, or
// all when pkg is ""), by subscriber name, at most limit: the rows whose
// MRR the dashboard sums at that instant.
func (r *Reports) ActiveList(ctx context.Context, tenant string, at time.Time, pkg string, limit int) ([]ActivePeriod, error) {
	args := []any{tenant, store.TimeParam(at)}
	cond := ""
	if pkg != "" {
		args = append(args, pkg)
		cond = " AND p.name = $3"
	}
	args = append(args, limit)
	q := `WITH ` + r.packagesCTE() + `
SELECT s.id, s.subscriber_id, sb.name, COALESCE(p.name, ''), s.currency, s.period_start, s.period_end, ` + mrrExpr + `
FROM subscriptions s` + periodJoins + ` JOIN subscribers sb ON sb.tenant_id = s.tenant_id AND sb.id = s.subscriber_id
WHERE s.tenant_id = $1 AND ` + active("$2") + cond + ` ORDER BY sb.name, s.id LIMIT $` + fmt.Sprint(len(args))
	return store.QueryAll(ctx, r.db, func(sc store.Scanner) (ActivePeriod, error) {
		var a ActivePeriod
		var start, end store.AnyTime
		err := sc.Scan(&a.SubscriptionID, &a.SubscriberID, &a.Subscriber, &a.Package, &a.Currency, &start, &end, &a.MRR)
		if start.T != nil && end.T != nil {
			a.PeriodStart, a.PeriodEnd = start.T.UTC(), end.T.UTC()
		}
		return a, err
	}, q, args...)
}

// PaymentRow is one succeeded payment, for the list behind the payments
// chart.
type PaymentRow struct {
	PaymentID     string
	InvoiceID     string
	InvoiceNumber int64
	SubscriberID  string
	Subscriber    string
	Provider      string
	Currency      string
	Amount        int64
	PaidAt        time.Time
}

// PaymentList is the succeeded payments paid in [from, until) (of
// provider, or all when ""), oldest first, at most limit.
func (r *Reports) PaymentList(ctx context.Context, tenant string, from, until time.Time, provider string, limit int) ([]PaymentRow, error) {
	args := []any{tenant, store.TimeParam(from), store.TimeParam(until)}
	cond := ""
	if provider != "" {
		args = append(args, provider)
		cond = " AND y.provider = $4"
	}
	args = append(args, limit)
	q := `SELECT y.id, y.invoice_id, i.invoice_number, y.subscriber_id, sb.name, y.provider, y.currency, y.amount, y.paid_at
FROM payments y JOIN invoices i ON i.tenant_id = y.tenant_id AND i.id = y.invoice_id
JOIN subscribers sb ON sb.tenant_id = y.tenant_id AND sb.id = y.subscriber_id
WHERE y.tenant_id = $1 AND y.status = 'Succeeded' AND y.paid_at >= $2 AND y.paid_at < $3` + cond + `
ORDER BY y.paid_at, y.id LIMIT $` + fmt.Sprint(len(args))
	return store.QueryAll(ctx, r.db, func(sc store.Scanner) (PaymentRow, error) {
		var p PaymentRow
		var paid store.AnyTime
		err := sc.Scan(&p.PaymentID, &p.InvoiceID, &p.InvoiceNumber, &p.SubscriberID, &p.Subscriber, &p.Provider, &p.Currency, &p.Amount, &paid)
		if paid.T != nil {
			p.PaidAt = paid.T.UTC()
		}
		return p, err
	}, q, args...)
}
