// Command analyticsdata fills an existing tenant with the data set of the
// analytics performance targets (issue 19): at -scale 1, 1,000,000
// subscribers (each with a billing account), 12,000,000 subscription
// periods (a monthly series of 12 periods per subscriber), 3,000,000
// invoices with their payment demands (the series' last three periods) and
// 3,000,000 payments (one per invoice, one in twenty failed), plus the
// organization and catalog they reference.
//
//	go run ./bench/analyticsdata -database-url postgres://... -tenant ID [-scale 0.01]
//	go run ./bench/analyticsdata -data-dir DIR -tenant ID -scale 0.01
//
// Going through the store row by row would take hours, so the bulk rows
// are cloned: the catalog and one subscription per package (its first
// invoice issued, a payment recorded) are written through the store and
// the engine, as bench/listfill does; those rows are read back and every
// generated row is a copy of its package's template with new ids, names,
// times and statuses. PostgreSQL gets them with COPY (the session runs
// with session_replication_role = replica, so the foreign-key triggers do
// not fire: the rows are consistent by construction); SQLite with
// prepared multi-row INSERTs, one transaction per chunk. Progress (rows/s,
// ETA) goes to stderr. On PostgreSQL it ends with VACUUM ANALYZE of the
// filled tables, as autovacuum would have run on a tenant in use.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Per subscriber: one account, periodsPer subscription periods, and an
// invoice, demand and payment for each of the last invoicedPer periods.
const (
	periodsPer  = 12
	invoicedPer = 3
	rowsPer     = 1 + 1 + periodsPer + 3*invoicedPer
)

func main() {
	dbURL := flag.String("database-url", "", "postgres:// URL of kadens's database (default: SQLite in -data-dir)")
	dataDir := flag.String("data-dir", "", "kadens's SQLite data directory")
	tenant := flag.String("tenant", "", "id of the tenant to fill (it must exist)")
	scale := flag.Float64("scale", 1, "fraction of the full set (1: 1,000,000 subscribers)")
	chunk := flag.Int("chunk", 5000, "subscribers per batch (one COPY per table, or one SQLite transaction)")
	flag.Parse()
	n := int(math.Round(*scale * 1_000_000))
	if *tenant == "" || n < 1 || *chunk < 1 {
		fmt.Fprintln(os.Stderr, "analyticsdata: -tenant is required, -scale and -chunk must be positive")
		os.Exit(2)
	}
	start := time.Now()
	org, err := fill(context.Background(), store.Options{DatabaseURL: *dbURL, DataDir: *dataDir}, *tenant, n, *chunk)
	if err != nil {
		fmt.Fprintln(os.Stderr, "analyticsdata:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "analyticsdata: %d subscribers, %d rows in %s\n", n, n*rowsPer, time.Since(start).Round(time.Second))
	fmt.Println(org)
}

// template is one package's rows as the store wrote them: column names and
// values per table, read back from the database.
type template struct {
	rows map[string]row
}

type row struct {
	cols []string
	vals []any
}

func (r row) index(col string) int {
	for i, c := range r.cols {
		if c == col {
			return i
		}
	}
	panic("analyticsdata: no column " + col)
}

// sink writes rows of one table in the engine's bulk way.
type sink interface {
	write(ctx context.Context, table string, cols []string, rows [][]any) error
	id(u uuid.UUID) any
	ts(t time.Time) any
	close(ctx context.Context) error
}

func fill(ctx context.Context, opts store.Options, tenant string, n, chunk int) (string, error) {
	st, err := store.Open(ctx, opts)
	if err != nil {
		return "", err
	}
	defer st.Close()
	ctx = tenancy.With(ctx, tenant)
	now := time.Now().UTC()
	templates, org, err := makeTemplates(ctx, st, now)
	if err != nil {
		return "", fmt.Errorf("templates: %w", err)
	}
	var out sink
	if st.Engine() == store.Postgres {
		out, err = openCopy(ctx, opts.DatabaseURL)
	} else {
		out, err = openSQLite(ctx, st.DB())
	}
	if err != nil {
		return "", err
	}
	defer out.close(ctx)
	for _, t := range templates {
		if err := t.read(ctx, st, out); err != nil {
			return "", fmt.Errorf("read templates: %w", err)
		}
	}

	// Numbers: subscribers after the existing ones, invoices reserved in the
	// organization's series (gap-free, as the store keeps it).
	var subBase int64
	if err := st.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(subscriber_number), 0) FROM subscribers WHERE tenant_id = $1`, tenant).Scan(&subBase); err != nil {
		return "", fmt.Errorf("subscriber numbers: %w", err)
	}
	var invLast int64
	err = st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		invLast, err = tx.ReserveNumbers(ctx, store.InvoiceSeries(org), int64(n*invoicedPer))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("invoice numbers: %w", err)
	}
	invBase := invLast - int64(n*invoicedPer)

	g := generator{out: out, tenant: tenant, templates: templates, now: now, subBase: subBase, invBase: invBase}
	total := n * rowsPer
	began := time.Now()
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n)
		if err := g.batch(ctx, from, to); err != nil {
			return "", fmt.Errorf("subscribers %d-%d: %w", from, to-1, err)
		}
		done := to * rowsPer
		el := time.Since(began)
		rate := float64(done) / el.Seconds()
		eta := time.Duration(float64(total-done)/rate) * time.Second
		fmt.Fprintf(os.Stderr, "analyticsdata: %d/%d subscribers, %d/%d rows (%.1f%%), %.0f rows/s, elapsed %s, ETA %s\n",
			to, n, done, total, 100*float64(done)/float64(total), rate, el.Round(time.Second), eta.Round(time.Second))
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE counters SET value = $3 WHERE tenant_id = $1 AND scope = $2 AND value < $3`,
		tenant, "subscriber", subBase+int64(n)); err != nil {
		return "", fmt.Errorf("subscriber counter: %w", err)
	}
	fmt.Fprintln(os.Stderr, "analyticsdata: analyzing")
	if st.Engine() == store.Postgres {
		for _, t := range []string{"subscribers", "subscriber_accounts", "subscriptions", "invoices", "payment_demands", "payments"} {
			if _, err := st.DB().ExecContext(ctx, `VACUUM ANALYZE `+t); err != nil {
				return "", fmt.Errorf("vacuum analyze %s: %w", t, err)
			}
		}
	} else if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		return "", fmt.Errorf("analyze: %w", err)
	}
	return org, nil
}

// pkgTemplate is a package's subscription with its invoice, demand and
// payment, as written by the store.
type pkgTemplate struct {
	subscriber, account, subscription, invoice, demand, payment string
	template
}

// read loads the template rows. Ids and times come back in the driver's
// types: on PostgreSQL ([16]byte, time.Time) they go back into COPY as
// they are; on SQLite times are turned back into the stored text.
func (t *pkgTemplate) read(ctx context.Context, st *store.Store, out sink) error {
	t.rows = map[string]row{}
	for table, id := range map[string]string{"subscribers": t.subscriber, "subscriber_accounts": t.account,
		"subscriptions": t.subscription, "invoices": t.invoice, "payment_demands": t.demand, "payments": t.payment} {
		rows, err := st.DB().QueryContext(ctx, `SELECT * FROM `+table+` WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return err
		}
		if !rows.Next() {
			rows.Close()
			return fmt.Errorf("%s %s: not found", table, id)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		err = rows.Scan(ptrs...)
		rows.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		for i, v := range vals {
			switch v := v.(type) {
			case time.Time:
				vals[i] = out.ts(v)
			case string:
				// pgx's database/sql driver gives uuids as text; COPY
				// wants them binary.
				if u, err := uuid.Parse(v); err == nil && len(v) == 36 {
					vals[i] = out.id(u)
				}
			}
		}
		t.rows[table] = row{cols: cols, vals: vals}
	}
	return nil
}

// generator builds the rows of subscribers [from, to).
type generator struct {
	out       sink
	tenant    string
	templates []*pkgTemplate
	now       time.Time
	subBase   int64
	invBase   int64
}

var (
	firstNames = []string{"Anne", "Bjørn", "Camilla", "Dag", "Eva", "Frode", "Guro", "Hans", "Ingrid", "Jon", "Kari", "Lars",
		"Maria", "Nils", "Ole", "Per", "Randi", "Sofie", "Tor", "Ulla", "Vidar", "Åse", "Øystein", "Lena", "Erik", "Sara"}
	lastNames = []string{"Hansen", "Johansen", "Olsen", "Larsen", "Andersen", "Pedersen", "Nilsen", "Kristiansen", "Jensen",
		"Karlsen", "Johnsen", "Pettersen", "Eriksen", "Berg", "Haugen", "Hagen", "Johannessen", "Andreassen", "Jacobsen", "Dahl"}
	cities = []struct{ city, postal, country string }{{"Oslo", "0150", "NO"}, {"Bergen", "5003", "NO"}, {"Trondheim", "7010", "NO"},
		{"Stavanger", "4006", "NO"}, {"Tromsø", "9008", "NO"}, {"Kristiansand", "4610", "NO"}, {"Stockholm", "11122", "SE"},
		{"Göteborg", "41103", "SE"}, {"København", "1050", "DK"}, {"Aarhus", "8000", "DK"}}
)

func (g *generator) batch(ctx context.Context, from, to int) error {
	tables := []string{"subscribers", "subscriber_accounts", "subscriptions", "invoices", "payment_demands", "payments"}
	out := map[string][][]any{}
	monthStart := time.Date(g.now.Year(), g.now.Month(), 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < to; i++ {
		t := g.templates[i%len(g.templates)]
		// Three in four series run now (their last period holds today);
		// the others ended in one of the 24 months before, cancelled.
		churned := i%4 == 3
		anchor := monthStart.AddDate(0, -(periodsPer - 1), i%28)
		if anchor.After(g.now) {
			anchor = anchor.AddDate(0, -1, 0)
		}
		if churned {
			anchor = anchor.AddDate(0, -(1 + i%24), 0)
		}
		subID, accID := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		first, last := firstNames[i%len(firstNames)], lastNames[(i/len(firstNames))%len(lastNames)]
		name := fmt.Sprintf("%s %s %d", first, last, i)
		email := fmt.Sprintf("%s.%s%d@example.no", strings.ToLower(first), strings.ToLower(last), i)
		c := cities[(i/7)%len(cities)]
		out["subscribers"] = append(out["subscribers"], g.clone(t, "subscribers", map[string]any{
			"id": g.out.id(subID), "subscriber_number": g.subBase + int64(i) + 1, "external_id": nil,
			"name": name, "email": email, "phone": fmt.Sprintf("+47 9%07d", i%10_000_000),
			"address_line1": fmt.Sprintf("Storgata %d", i%200+1), "address_line2": "", "address_postal_code": c.postal,
			"address_city": c.city, "address_country": c.country, "country": c.country, "contacts": "[]",
			"email_key": strings.ToLower(email), "name_key": strings.ToLower(name),
			"created_at": g.out.ts(anchor), "updated_at": g.out.ts(anchor),
		}))
		out["subscriber_accounts"] = append(out["subscriber_accounts"], g.clone(t, "subscriber_accounts", map[string]any{
			"id": g.out.id(accID), "subscriber_id": g.out.id(subID), "created_at": g.out.ts(anchor),
		}))
		ids := make([]uuid.UUID, periodsPer)
		for k := range ids {
			ids[k] = uuid.Must(uuid.NewV7())
		}
		for k := range periodsPer {
			start, end := anchor.AddDate(0, k, 0), anchor.AddDate(0, k+1, 0)
			var prev, next, renew, action, cancelled, deactivated any
			reason := ""
			if k > 0 {
				prev = g.out.id(ids[k-1])
			}
			if k < periodsPer-1 {
				next = g.out.id(ids[k+1])
			} else if churned {
				cancelled, deactivated, reason = g.out.ts(start.AddDate(0, 0, 10)), g.out.ts(end), "Customer request"
				action = nil
			} else {
				renew, action = g.out.ts(end), g.out.ts(end)
			}
			out["subscriptions"] = append(out["subscriptions"], g.clone(t, "subscriptions", map[string]any{
				"id": g.out.id(ids[k]), "subscriber_id": g.out.id(subID), "anchor": g.out.ts(anchor), "period_index": k,
				"period_start": g.out.ts(start), "period_end": g.out.ts(end), "renew_at": renew, "previous_id": prev, "next_id": next,
				"cancelled_at": cancelled, "cancel_effective_at": deactivated, "cancel_reason": reason, "deactivated_at": deactivated,
				"next_action_at": action, "version": 1, "created_at": g.out.ts(start),
			}))
			if k < periodsPer-invoicedPer {
				continue
			}
			j := int64(i)*invoicedPer + int64(k-(periodsPer-invoicedPer))
			number := g.invBase + j + 1
			invID, demID, payID := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
			inv := t.rows["invoices"]
			gross := inv.vals[inv.index("gross")]
			failed := (i+k)%20 == 0
			invStatus, demStatus, paid := "Paid", "Paid", gross
			if failed {
				invStatus, demStatus, paid = "Issued", "Open", int64(0)
			}
			due := start.AddDate(0, 0, 14)
			paidAt := start.AddDate(0, 0, 1+(i+k)%12)
			out["invoices"] = append(out["invoices"], g.clone(t, "invoices", map[string]any{
				"id": g.out.id(invID), "invoice_number": number, "payment_demand_id": g.out.id(demID), "account_id": g.out.id(accID),
				"subscriber_id": g.out.id(subID), "subscription_id": g.out.id(ids[k]), "status": invStatus,
				"issued_at": g.out.ts(start), "due_at": g.out.ts(due), "issue_date": start.Format(time.DateOnly),
				"due_date": due.Format(time.DateOnly), "period_start": g.out.ts(start), "period_end": g.out.ts(end),
				"kid": kid(number), "created_at": g.out.ts(start),
			}))
			out["payment_demands"] = append(out["payment_demands"], g.clone(t, "payment_demands", map[string]any{
				"id": g.out.id(demID), "invoice_id": g.out.id(invID), "account_id": g.out.id(accID), "subscriber_id": g.out.id(subID),
				"subscription_id": g.out.id(ids[k]), "amount": gross, "paid_amount": paid, "credited_amount": int64(0), "status": demStatus,
				"issued_at": g.out.ts(start), "due_at": g.out.ts(due), "created_at": g.out.ts(start),
				"dunning_process_id": nil, "reminders_sent": 0, "next_dunning_at": nil,
			}))
			pay := map[string]any{
				"id": g.out.id(payID), "payment_demand_id": g.out.id(demID), "invoice_id": g.out.id(invID), "account_id": g.out.id(accID),
				"subscriber_id": g.out.id(subID), "status": "Succeeded", "amount": gross, "applied": gross, "surplus": int64(0),
				"allowance_item_id": nil, "paid_at": g.out.ts(paidAt), "provider_reference": "bench-" + strconv.FormatInt(number, 10),
				"failure_reason": nil, "created_at": g.out.ts(paidAt),
			}
			if failed {
				pay["status"], pay["applied"], pay["failure_reason"] = "Failed", int64(0), "Insufficient funds"
			}
			out["payments"] = append(out["payments"], g.clone(t, "payments", pay))
		}
	}
	for _, table := range tables {
		if err := g.out.write(ctx, table, g.templates[0].rows[table].cols, out[table]); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return nil
}

// clone is the template's row of table with the values of set replaced.
// Every template of a table has the same columns (SELECT *).
func (g *generator) clone(t *pkgTemplate, table string, set map[string]any) []any {
	r := t.rows[table]
	vals := make([]any, len(r.vals))
	copy(vals, r.vals)
	for col, v := range set {
		vals[r.index(col)] = v
	}
	return vals
}

// kid is a MOD10 (Luhn) KID of an invoice number: the number and its
// check digit.
func kid(number int64) string {
	s := strconv.FormatInt(number, 10)
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return s + strconv.Itoa((10-sum%10)%10)
}

// copySink writes with COPY on a connection of its own.
type copySink struct{ conn *pgx.Conn }

func openCopy(ctx context.Context, url string) (*copySink, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	// The generated rows reference each other and their templates only;
	// skipping the foreign-key triggers makes COPY several times faster.
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("session_replication_role (needs a superuser): %w", err)
	}
	return &copySink{conn: conn}, nil
}

func (c *copySink) write(ctx context.Context, table string, cols []string, rows [][]any) error {
	n, err := c.conn.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	if err != nil {
		return err
	}
	if n != int64(len(rows)) {
		return fmt.Errorf("copy: %d of %d rows written", n, len(rows))
	}
	return nil
}

func (c *copySink) id(u uuid.UUID) any              { return [16]byte(u) }
func (c *copySink) ts(t time.Time) any              { return t.UTC().Truncate(time.Microsecond) }
func (c *copySink) close(ctx context.Context) error { return c.conn.Close(ctx) }

// sqliteSink writes multi-row INSERTs, one transaction per batch. A
// statement binds at most sqliteParams values: the driver's binding cost
// grows with the square of a statement's parameters (see store/bulk.go).
type sqliteSink struct{ db *sql.DB }

const sqliteParams = 512

func openSQLite(_ context.Context, db *sql.DB) (*sqliteSink, error) {
	return &sqliteSink{db: db}, nil
}

func (s *sqliteSink) write(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, sqliteParams/len(cols))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	// Statements are prepared on the transaction: SQLite's writer pool has
	// one connection, which the transaction holds.
	stmts := map[int]*sql.Stmt{}
	args := make([]any, 0, per*len(cols))
	for from := 0; from < len(rows); from += per {
		part := rows[from:min(from+per, len(rows))]
		stmt, ok := stmts[len(part)]
		if !ok {
			row := "(?" + strings.Repeat(", ?", len(cols)-1) + ")"
			text := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " +
				strings.TrimSuffix(strings.Repeat(row+", ", len(part)), ", ")
			if stmt, err = tx.PrepareContext(ctx, text); err != nil {
				return err
			}
			stmts[len(part)] = stmt
		}
		args = args[:0]
		for _, r := range part {
			args = append(args, r...)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteSink) id(u uuid.UUID) any { return u.String() }

// ts is the store's SQLite timestamp text (store.dbTimeLayout).
func (s *sqliteSink) ts(t time.Time) any { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func (s *sqliteSink) close(context.Context) error { return nil }

// makeTemplates writes the catalog (as bench/listfill's) and, for each
// monthly package, a subscriber with one subscription whose first period is
// invoiced and paid, all through the store, the engine and invoicing.
func makeTemplates(ctx context.Context, st *store.Store, now time.Time) ([]*pkgTemplate, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	pkgs, templateIDs, org, err := catalogFixture(ctx, st, now)
	if err != nil {
		return nil, "", fmt.Errorf("catalog: %w", err)
	}
	var out []*pkgTemplate
	for k, p := range pkgs {
		s, err := st.CreateSubscriber(ctx, store.Subscriber{Name: fmt.Sprintf("Template %d", k), Email: fmt.Sprintf("template%d@example.no", k),
			Country: "NO", Address: store.Address{Line1: "Storgata 1", PostalCode: "0150", City: "Oslo", Country: "NO"},
			Contacts: []store.Contact{}}, now)
		if err != nil {
			return nil, "", fmt.Errorf("subscriber: %w", err)
		}
		sub, err := engine.Begin(engine.NewSeries{SubscriberID: s.ID, OrganizationID: org, TimeZone: "Europe/Oslo", Package: p,
			TemplatePackageID: templateIDs[k], Start: now}, now)
		if err != nil {
			return nil, "", err
		}
		if sub.PeriodEnd.Sub(sub.PeriodStart) > 31*24*time.Hour {
			return nil, "", fmt.Errorf("package %d is not monthly: period %s–%s", k, sub.PeriodStart, sub.PeriodEnd)
		}
		err = st.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertSubscription(ctx, sub); err != nil {
				return err
			}
			return invoicing.IssuePeriods(ctx, tx, []store.NewPeriod{{Sub: sub, At: now}})
		})
		if err != nil {
			return nil, "", fmt.Errorf("subscription: %w", err)
		}
		t := &pkgTemplate{subscriber: s.ID, subscription: sub.ID}
		var gross int64
		if err := st.DB().QueryRowContext(ctx, `SELECT d.id, d.invoice_id, d.account_id, d.amount FROM payment_demands d
			WHERE d.tenant_id = $1 AND d.subscription_id = $2`, tenant, sub.ID).Scan(&t.demand, &t.invoice, &t.account, &gross); err != nil {
			return nil, "", fmt.Errorf("template demand: %w", err)
		}
		pay, _, err := invoicing.RecordPayment(ctx, st, invoicing.NewPayment{PaymentDemandID: t.demand, Status: store.PaymentSucceeded,
			Amount: gross, Currency: p.Currency, PaidAt: now, Provider: "Invoice", ProviderReference: "template-" + t.demand, Now: now})
		if err != nil {
			return nil, "", fmt.Errorf("template payment: %w", err)
		}
		t.payment = pay.ID
		out = append(out, t)
	}
	return out, org, nil
}

// catalogFixture creates an organization, two products, a monthly and a
// yearly plan and three templates (as bench/listfill's), and returns the
// monthly subscription packages orders of them get.
func catalogFixture(ctx context.Context, st *store.Store, now time.Time) (pkgs []catalog.SubscriptionPackage, templates []string, org string, err error) {
	nok, _ := money.LookupCurrency("NOK")
	o, err := st.CreateOrganization(ctx, store.Organization{Name: "Analytics Avis AS", OrganizationNumber: "923609016", Country: "NO",
		Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: true}, now)
	if err != nil {
		return nil, nil, "", err
	}
	digital, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Digital", Category: "digital", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return nil, nil, "", err
	}
	paper, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Papiravis", Category: "paper", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return nil, nil, "", err
	}
	monthly, err := catalogdb.CreateBillingPlan(ctx, st, catalog.BillingPlan{Name: "Månedlig", IntervalUnit: period.Month, IntervalCount: 1, PaymentTermsDays: 14}, now)
	if err != nil {
		return nil, nil, "", err
	}
	yearly, err := catalogdb.CreateBillingPlan(ctx, st, catalog.BillingPlan{Name: "Årlig", IntervalUnit: period.Year, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14}, now)
	if err != nil {
		return nil, nil, "", err
	}
	type order struct {
		tmpl    catalog.TemplatePackage
		choices []catalog.Choices
	}
	two := 2
	orders := []order{
		{catalog.TemplatePackage{Name: "Digital – månedlig", Description: "Full digital tilgang, betales månedlig.", Currency: "NOK",
			Price: catalog.NewAmount(19900, nok), Units: 1, PermanentDiscount: catalog.PercentOf(0),
			Products: []catalog.PackageProduct{{ProductID: digital.ID}}, BillingPlans: []string{monthly.ID},
			AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, []catalog.Choices{{}}},
		{catalog.TemplatePackage{Name: "Digital – årlig", Description: "Full digital tilgang, betales årlig.", Currency: "NOK",
			Price: catalog.NewAmount(199000, nok), Units: 1, PermanentDiscount: catalog.PercentOf(0),
			Products: []catalog.PackageProduct{{ProductID: digital.ID}}, BillingPlans: []string{yearly.ID},
			AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, nil},
		{catalog.TemplatePackage{Name: "Papir + digital", Description: "Papiravisen hver dag og full digital tilgang.", Currency: "NOK",
			Price: catalog.NewAmount(54900, nok), Units: 1, PermanentDiscount: catalog.PercentOf(10),
			Products:     []catalog.PackageProduct{{ProductID: paper.ID}, {ProductID: digital.ID}},
			BillingPlans: []string{monthly.ID, yearly.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 2}},
			[]catalog.Choices{{}, {Units: &two}}},
	}
	for _, o := range orders {
		t, err := catalogdb.CreatePackage(ctx, st, o.tmpl, now)
		if err != nil {
			return nil, nil, "", fmt.Errorf("template %s: %w", o.tmpl.Name, err)
		}
		in, err := catalogdb.PackageForMerge(ctx, st, t.ID)
		if err != nil {
			return nil, nil, "", err
		}
		// The yearly template is in the catalog but has no subscriptions:
		// every generated series is monthly.
		for _, c := range o.choices {
			in.Choices = c
			p, err := catalog.Merge(in)
			if err != nil {
				return nil, nil, "", fmt.Errorf("merge %s: %w", o.tmpl.Name, err)
			}
			pkgs, templates = append(pkgs, p), append(templates, t.ID)
		}
	}
	return pkgs, templates, o.ID, nil
}
