package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The distribution list's SQL (docs/PRINT.md, "The distribution list").
// One query per view streams the day's copies from the read pool in the
// order the view is written, so memory stays flat however many copies
// there are: a copy is a period covering the day whose package holds a
// product delivered that day, its address resolved in SQL (a temporary
// address covering the day, else the latest permanent change in effect,
// else the subscriber's own) and routed by the tenant's postal-code table.
// Stops and addresses are kept on a series' last period; they are joined
// by order, since an order begins one series and every period of it (and
// of a plan change's new series) keeps the order.

// DistributionRequest asks for one view of one day, of one carrier or
// (Carrier nil) all of them; a copy whose postal code has no deliverable
// entry in the postal-code table has the carrier "".
type DistributionRequest struct {
	Day     Date
	Carrier *string
	View    string // ViewList, ViewDelta or ViewCounts
}

// DistributionSummary is what a written view held: its lines and, for the
// list and counts, the copies (quantities summed).
type DistributionSummary struct {
	Lines  int
	Copies int
}

// printPackage is a stored package's print side: its products with a
// delivery schedule (sorted by id) and its units (copies per delivery).
type printPackage struct {
	products []string
	units    int
}

// Distribution is what a day's views are built from, read once.
type Distribution struct {
	tenant   string
	engine   store.Engine
	weekdays map[string]Weekdays // product → pattern
	packages map[string]printPackage
	calendar Calendar
	zones    []*time.Location
}

// LoadDistribution reads what the views of the context tenant's day are
// built from: the schedules, the packages with print products, the
// calendar around the day and the organizations' time zones.
func LoadDistribution(ctx context.Context, st *store.Store, day Date) (*Distribution, error) {
	d, err := loadDistribution(ctx, st, day)
	if err != nil {
		return nil, fmt.Errorf("delivery: distribution of %s: %w", day, err)
	}
	return d, nil
}

func loadDistribution(ctx context.Context, st *store.Store, day Date) (*Distribution, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	q := st.Reader()
	d := &Distribution{tenant: tenant, engine: st.Engine(), weekdays: map[string]Weekdays{}, packages: map[string]printPackage{}}
	type sched struct {
		id string
		w  int
	}
	scheds, err := store.QueryAll(ctx, q, func(row store.Scanner) (sched, error) {
		var s sched
		return s, row.Scan(&s.id, &s.w)
	}, `SELECT product_id, weekdays FROM delivery_schedules WHERE tenant_id = $1`, tenant)
	if err != nil {
		return nil, fmt.Errorf("schedules: %w", err)
	}
	for _, s := range scheds {
		d.weekdays[s.id] = Weekdays(s.w) & AllWeekdays
	}
	if len(d.weekdays) > 0 {
		rows, err := q.Query(ctx, `SELECT hash, package FROM subscription_packages WHERE tenant_id = $1`, tenant)
		if err != nil {
			return nil, fmt.Errorf("packages: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var hash, text string
			if err := rows.Scan(&hash, &text); err != nil {
				return nil, fmt.Errorf("packages: %w", err)
			}
			var p catalog.SubscriptionPackage
			if err := json.Unmarshal([]byte(text), &p); err != nil {
				return nil, fmt.Errorf("package %s: %w", hash, err)
			}
			var pp printPackage
			for _, l := range slices.Concat(p.Products, p.AdditionalProducts) {
				if d.weekdays[l.ProductID] != 0 && !slices.Contains(pp.products, l.ProductID) {
					pp.products = append(pp.products, l.ProductID)
				}
			}
			if len(pp.products) > 0 {
				slices.Sort(pp.products)
				pp.units = max(p.Units, 1)
				d.packages[hash] = pp
			}
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("packages: %w", err)
		}
	}
	// A year back is as far as a product's previous delivery day is looked
	// for (a weekly title has one seven days back; closed days add a few).
	if d.calendar, err = calendarIn(ctx, q, tenant, day.AddDays(-lookBack), day.AddDays(1)); err != nil {
		return nil, fmt.Errorf("calendar: %w", err)
	}
	names, err := store.QueryAll(ctx, q, func(row store.Scanner) (string, error) {
		var z string
		return z, row.Scan(&z)
	}, `SELECT DISTINCT time_zone FROM organizations WHERE tenant_id = $1 ORDER BY time_zone`, tenant)
	if err != nil {
		return nil, fmt.Errorf("time zones: %w", err)
	}
	for _, n := range names {
		loc, err := time.LoadLocation(n)
		if err != nil {
			return nil, fmt.Errorf("time zone %q: %w", n, err)
		}
		d.zones = append(d.zones, loc)
	}
	return d, nil
}

// lookBack bounds the search for a product's previous delivery day.
const lookBack = 366

// delivers is the set of products delivered on day.
func (d *Distribution) delivers(day Date) map[string]bool {
	out := map[string]bool{}
	if !d.calendar.Publishes(day) {
		return out
	}
	for p, w := range d.weekdays {
		if w.Has(day.Weekday()) {
			out[p] = true
		}
	}
	return out
}

// previous is product p's last delivery day before day (zero: none within
// lookBack days).
func (d *Distribution) previous(p string, day Date) Date {
	for i := 1; i <= lookBack; i++ {
		x := day.AddDays(-i)
		if d.weekdays[p].Has(x.Weekday()) && d.calendar.Publishes(x) {
			return x
		}
	}
	return Date{}
}

// hashes are the stored packages holding any of products, sorted.
func (d *Distribution) hashes(products map[string]bool) []string {
	var out []string
	for h, pp := range d.packages {
		for _, p := range pp.products {
			if products[p] {
				out = append(out, h)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// params numbers a query's parameters; $1 is the tenant.
type params struct{ v []any }

func (a *params) add(x any) string {
	a.v = append(a.v, x)
	return fmt.Sprintf("$%d", len(a.v))
}

// text orders a text column bytewise on both engines: PostgreSQL's
// database collation may not (and the order must be the same everywhere).
func (d *Distribution) text(expr string) string {
	if d.engine == store.Postgres {
		return expr + ` COLLATE "C"`
	}
	return expr
}

// dayQuery selects the copies' rows of day (which tags them, for a query
// over two days) among packages hashes: one row per period covering the
// day, with its stop flag and resolved address. The period covers the day
// when it runs at the day's first instant in its zone (periods begin at
// local midnight; a plan change's new series begins at the change and is
// the old series' until the next day).
func (d *Distribution) dayQuery(a *params, which int, day Date, hashes []string, carrier *string) string {
	ds := a.add(day.String())
	var at string
	if len(d.zones) == 1 {
		at = a.add(store.TimeParam(day.In(d.zones[0])))
	} else {
		var b strings.Builder
		b.WriteString("CASE s.time_zone")
		for _, z := range d.zones {
			fmt.Fprintf(&b, " WHEN %s THEN %s", a.add(z.String()), a.add(store.TimeParam(day.In(z))))
		}
		b.WriteString(" END")
		at = b.String()
	}
	hs := make([]string, len(hashes))
	for i, h := range hashes {
		hs[i] = a.add(h)
	}
	// A copy's stop and addresses are found by its order (migration 00065:
	// every period of the series, and of a plan change's, keeps it), one
	// index probe each: temporary addresses do not overlap, and the
	// permanent address is the one in effect latest (by first day, then id).
	live := `x.tenant_id = $1 AND x.order_id = s.order_id AND x.deleted_at IS NULL`
	q := `SELECT ` + fmt.Sprint(which) + ` AS which, r.order_id, r.id, r.subscriber_id, r.package_hash, r.stopped, r.source,
		r.name, r.line1, r.line2, r.postal_code, r.city, r.country,
		COALESCE(pc.carrier, '') AS carrier, COALESCE(pc.route, '') AS route
	FROM (SELECT s.order_id, s.id, s.subscriber_id, s.package_hash,
			CASE WHEN EXISTS (SELECT 1 FROM delivery_stops x WHERE ` + live + ` AND x.first_date <= ` + ds + ` AND x.last_date >= ` + ds + `)
				THEN 1 ELSE 0 END AS stopped,
			CASE WHEN ta.id IS NOT NULL THEN 'Temporary' WHEN pa.id IS NOT NULL THEN 'Permanent' ELSE 'Subscriber' END AS source,
			COALESCE(NULLIF(ta.name, ''), NULLIF(pa.name, ''), sb.name) AS name,
			COALESCE(ta.line1, pa.line1, sb.address_line1) AS line1,
			COALESCE(ta.line2, pa.line2, sb.address_line2) AS line2,
			COALESCE(ta.postal_code, pa.postal_code, sb.address_postal_code) AS postal_code,
			COALESCE(ta.city, pa.city, sb.address_city) AS city,
			COALESCE(ta.country, pa.country, NULLIF(sb.address_country, ''), sb.country) AS country
		FROM subscriptions s
		JOIN subscribers sb ON sb.tenant_id = s.tenant_id AND sb.id = s.subscriber_id
		LEFT JOIN delivery_addresses ta ON ta.tenant_id = $1 AND ta.id = (SELECT x.id FROM delivery_addresses x
			WHERE ` + live + ` AND x.kind = 'Temporary' AND x.first_date <= ` + ds + ` AND x.last_date >= ` + ds + `
			LIMIT 1)
		LEFT JOIN delivery_addresses pa ON pa.tenant_id = $1 AND pa.id = (SELECT x.id FROM delivery_addresses x
			WHERE ` + live + ` AND x.kind = 'Permanent' AND x.first_date <= ` + ds + `
			ORDER BY x.first_date DESC, x.id DESC LIMIT 1)
		WHERE s.tenant_id = $1 AND s.order_id IS NOT NULL AND s.package_hash IN (` + strings.Join(hs, ", ") + `)
			AND s.period_start <= ` + at + ` AND s.period_end > ` + at + `
			AND (s.cancel_effective_at IS NULL OR s.cancel_effective_at > ` + at + `)
			AND (s.deactivated_at IS NULL OR s.deactivated_at > ` + at + `)) r
	LEFT JOIN delivery_postal_codes pc ON pc.tenant_id = $1 AND pc.country = r.country
		AND pc.postal_code = UPPER(TRIM(r.postal_code)) AND pc.deliverable`
	if carrier != nil {
		q += ` WHERE COALESCE(pc.carrier, '') = ` + a.add(*carrier)
	}
	return q
}

// dayRow is a row of dayQuery.
type dayRow struct {
	which   int
	orderID string
	copy    Copy // without ID and product
	hash    string
	stopped bool
}

func scanDayRow(rows store.Scanner) (dayRow, error) {
	var r dayRow
	var stopped int
	a := &r.copy.Address
	err := rows.Scan(&r.which, &r.orderID, &r.copy.SubscriptionID, &r.copy.SubscriberID, &r.hash, &stopped, &r.copy.AddressSource,
		&a.Name, &a.Line1, &a.Line2, &a.PostalCode, &a.City, &a.Country, &a.Carrier, &a.Route)
	r.stopped = stopped != 0
	r.copy.OrderID = r.orderID
	return r, err
}

// each streams query's rows to fn.
func each(ctx context.Context, st *store.Store, query string, args []any, fn func(dayRow) error) error {
	rows, err := st.Reader().Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanDayRow(rows)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// copies are row's copies of products (those of its package, in id order).
func (d *Distribution) copies(r dayRow, products map[string]bool) []Copy {
	pp := d.packages[r.hash]
	var out []Copy
	for _, p := range pp.products {
		if products[p] {
			c := r.copy
			c.ID, c.ProductID, c.Quantity = CopyID(r.orderID, p), p, pp.units
			out = append(out, c)
		}
	}
	return out
}

// WriteDistribution writes a view of the context tenant's day to enc:
//   - the list: every copy delivered on the day, ordered by carrier, route,
//     postal code, street line, order and product (bytewise);
//   - the delta: per product, the changes since its previous delivery day
//     (none within a year: every copy is New), ordered by that day, then by
//     order and product;
//   - the counts: copies per carrier, route, postal code and product, in
//     the list's order.
//
// The schedules, packages and calendar are read first (LoadDistribution),
// so that a caller answers a failure there before it writes anything.
func WriteDistribution(ctx context.Context, st *store.Store, req DistributionRequest, enc *Encoder) (DistributionSummary, error) {
	d, err := LoadDistribution(ctx, st, req.Day)
	if err != nil {
		return DistributionSummary{}, err
	}
	return d.Write(ctx, st, req, enc)
}

// Write writes req's view (of the day d was loaded for) to enc.
func (d *Distribution) Write(ctx context.Context, st *store.Store, req DistributionRequest, enc *Encoder) (DistributionSummary, error) {
	var sum DistributionSummary
	var err error
	switch req.View {
	case ViewList, ViewCounts:
		err = d.writeList(ctx, st, req, enc, &sum)
	case ViewDelta:
		err = d.writeDelta(ctx, st, req, enc, &sum)
	default:
		err = fmt.Errorf("view %q", req.View)
	}
	if err == nil {
		err = enc.Flush(req.View)
	}
	if err != nil {
		return sum, fmt.Errorf("delivery: distribution of %s: %w", req.Day, err)
	}
	return sum, nil
}

func (d *Distribution) writeList(ctx context.Context, st *store.Store, req DistributionRequest, enc *Encoder, sum *DistributionSummary) error {
	products := d.delivers(req.Day)
	hashes := d.hashes(products)
	if len(hashes) == 0 {
		return nil
	}
	a := &params{v: []any{d.tenant}}
	q := `SELECT * FROM (` + d.dayQuery(a, 0, req.Day, hashes, req.Carrier) + `) l WHERE l.stopped = 0
		ORDER BY ` + d.text("l.carrier") + `, ` + d.text("l.route") + `, ` + d.text("l.postal_code") + `, ` + d.text("l.line1") + `, ` + "l.order_id"
	// Counts gather one postal code's products (a handful) at a time.
	var (
		group  RouteCount
		counts = map[string]int{}
	)
	flush := func() error {
		ps := make([]string, 0, len(counts))
		for p := range counts {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		for _, p := range ps {
			c := group
			c.ProductID, c.Copies = p, counts[p]
			if err := enc.Count(req.Day, c); err != nil {
				return err
			}
			sum.Lines++
		}
		clear(counts)
		return nil
	}
	err := each(ctx, st, q, a.v, func(r dayRow) error {
		for _, c := range d.copies(r, products) {
			sum.Copies += c.Quantity
			if req.View == ViewList {
				if err := enc.Copy(req.Day, c); err != nil {
					return err
				}
				sum.Lines++
				continue
			}
			key := RouteCount{Carrier: c.Address.Carrier, Route: c.Address.Route, PostalCode: c.Address.PostalCode}
			if key != group {
				if err := flush(); err != nil {
					return err
				}
				group = key
			}
			counts[c.ProductID] += c.Quantity
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

func (d *Distribution) writeDelta(ctx context.Context, st *store.Store, req DistributionRequest, enc *Encoder, sum *DistributionSummary) error {
	// Products delivered on the day, grouped by their previous delivery day:
	// each group is one query over both days, ordered by order.
	groups := map[Date]map[string]bool{}
	for p := range d.delivers(req.Day) {
		prev := d.previous(p, req.Day)
		if groups[prev] == nil {
			groups[prev] = map[string]bool{}
		}
		groups[prev][p] = true
	}
	prevs := make([]Date, 0, len(groups))
	for p := range groups {
		prevs = append(prevs, p)
	}
	slices.SortFunc(prevs, func(a, b Date) int { return strings.Compare(a.String(), b.String()) })
	for _, prev := range prevs {
		products := groups[prev]
		hashes := d.hashes(products)
		if len(hashes) == 0 {
			continue
		}
		a := &params{v: []any{d.tenant}}
		q := d.dayQuery(a, 1, req.Day, hashes, req.Carrier)
		if !prev.IsZero() {
			q = d.dayQuery(a, 0, prev, hashes, req.Carrier) + ` UNION ALL ` + q
		}
		q = `SELECT * FROM (` + q + `) u`
		q += ` ORDER BY ` + "u.order_id" + `, u.which`
		// One order's rows (its period then and now) at a time.
		var (
			order      string
			then, now_ map[string]dayState
		)
		flush := func() error {
			keys := make([]string, 0, len(then)+len(now_))
			for p := range then {
				keys = append(keys, p)
			}
			for p := range now_ {
				if _, ok := then[p]; !ok {
					keys = append(keys, p)
				}
			}
			slices.Sort(keys)
			for _, p := range keys {
				if ch, ok := diff(then[p], now_[p]); ok {
					if err := enc.Change(req.Day, ch); err != nil {
						return err
					}
					sum.Lines++
				}
			}
			clear(then)
			clear(now_)
			return nil
		}
		then, now_ = map[string]dayState{}, map[string]dayState{}
		err := each(ctx, st, q, a.v, func(r dayRow) error {
			if r.orderID != order {
				if err := flush(); err != nil {
					return err
				}
				order = r.orderID
			}
			m := then
			if r.which == 1 {
				m = now_
			}
			for _, c := range d.copies(r, products) {
				m[c.ProductID] = dayState{present: true, stopped: r.stopped, copy: c}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// CarrierCopies is one carrier's copies on a published day.
type CarrierCopies struct {
	Carrier string `json:"carrier"`
	Copies  int    `json:"copies"`
}

// Publication is a day's list published: its revision (1 the first time,
// raised by each publication after it), its copies, per carrier too.
type Publication struct {
	Date        string          `json:"date"`
	Revision    int             `json:"revision"`
	Copies      int             `json:"copies"`
	Carriers    []CarrierCopies `json:"carriers"`
	PublishedAt time.Time       `json:"publishedAt"`
}

// carrierCounter totals the counts view per carrier; the counts come in
// carrier order, so it holds one carrier at a time.
type carrierCounter struct{ out []CarrierCopies }

func (c *carrierCounter) add(rc RouteCount) {
	if n := len(c.out); n > 0 && c.out[n-1].Carrier == rc.Carrier {
		c.out[n-1].Copies += rc.Copies
		return
	}
	c.out = append(c.out, CarrierCopies{Carrier: rc.Carrier, Copies: rc.Copies})
}

// PublishDistribution publishes the context tenant's list of day: it
// counts the day's copies per carrier and, in one transaction, raises the
// day's revision and records DistributionListAvailable, so a carrier's
// system subscribed to it fetches GET /distribution/{date} (and knows a
// corrected list by a higher revision). Concurrent publications each get
// their own revision.
func PublishDistribution(ctx context.Context, st *store.Store, day Date, now time.Time) (Publication, error) {
	now = now.UTC().Truncate(time.Microsecond)
	d, err := LoadDistribution(ctx, st, day)
	if err != nil {
		return Publication{}, err
	}
	var cc carrierCounter
	enc := &Encoder{count: cc.add}
	sum, err := d.Write(ctx, st, DistributionRequest{Day: day, View: ViewCounts}, enc)
	if err != nil {
		return Publication{}, err
	}
	p := Publication{Date: day.String(), Copies: sum.Copies, Carriers: cc.out, PublishedAt: now}
	if p.Carriers == nil {
		p.Carriers = []CarrierCopies{}
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO delivery_distribution_publications (tenant_id, day, revision, copies, published_at)
			VALUES ($1, $2, 1, $3, $4)
			ON CONFLICT (tenant_id, day) DO UPDATE SET revision = delivery_distribution_publications.revision + 1,
				copies = excluded.copies, published_at = excluded.published_at
			RETURNING revision`, tx.TenantID(), p.Date, p.Copies, store.TimeParam(now)).Scan(&p.Revision)
		if err != nil {
			return err
		}
		return tx.AddEvents(ctx, []store.NewEvent{{Type: store.EventDistributionListAvailable, Subject: "/distribution/" + p.Date, Data: p, At: now}})
	})
	if err != nil {
		return Publication{}, fmt.Errorf("delivery: publish the distribution of %s: %w", day, err)
	}
	return p, nil
}
