package tenantimport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/country"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/ehf"
	"github.com/kadens/kadens/internal/provider/external"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/provider/oio"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// ErrProblems: rows of the file are wrong (Report.Problems says which);
// nothing of the batch they are in, nor after it, was written.
var ErrProblems = errors.New("tenantimport: the file has problems")

// errDryRun rolls a dry run's batch back.
var errDryRun = errors.New("tenantimport: dry run")

// Options steer an import.
type Options struct {
	// File names the input in problems; Format is its format.
	File   string
	Format Format
	// DryRun does everything in transactions that are rolled back: the
	// report says what a real run would do, and nothing changes.
	DryRun bool
	// Batch is how many subscribers one transaction writes (default 200).
	Batch int
	// Now is the tenant's time (a test tenant's clock).
	Now time.Time
	// Providers checks payment agreements by provider type.
	Providers *provider.Registry
	// Progress, if set, is called after each batch.
	Progress func(Progress)
}

// Progress is how far an import has come.
type Progress struct {
	Subscribers, Total int
	Elapsed            time.Duration
}

// Counts say what happened to the rows of one kind.
type Counts struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// Skipped rows were imported before and differ now: the import does not
	// change imported agreements and running subscriptions (Notes say which).
	Skipped int `json:"skipped"`
}

// Report says what an import did, or for a dry run would do.
type Report struct {
	DryRun        bool      `json:"dryRun"`
	Subscribers   Counts    `json:"subscribers"`
	Agreements    Counts    `json:"paymentAgreements"`
	Subscriptions Counts    `json:"subscriptions"`
	Problems      []Problem `json:"problems"`
	Notes         []Problem `json:"notes"`
	Elapsed       string    `json:"elapsed"`
}

// Run imports the file r into the tenant of ctx. Every row is checked
// first, the catalog included; with problems nothing is written and the
// error is ErrProblems. Then subscribers are written in batches, each in
// one transaction (rolled back in a dry run). A batch that fails on a
// write (a subscriber number or an agreement reference taken since the
// check) rolls back whole and ends the run with its problem; the batches
// before it stay, and a rerun goes on from there, creating nothing twice.
func Run(ctx context.Context, st *store.Store, eng *engine.Engine, r io.Reader, o Options) (Report, error) {
	began := time.Now()
	rep := Report{DryRun: o.DryRun, Problems: []Problem{}, Notes: []Problem{}}
	if o.Batch <= 0 {
		o.Batch = 200
	}
	if o.Providers == nil {
		o.Providers = Providers()
	}
	subs, problems, err := parse(r, o.File, o.Format)
	if err != nil {
		return rep, err
	}
	rep.Problems = append(rep.Problems, problems...)
	im := eng.Importer()
	c, err := newChecker(ctx, st, o, im)
	if err != nil {
		return rep, err
	}
	for _, s := range subs {
		rep.Problems = append(rep.Problems, c.check(ctx, s)...)
	}
	if c.err != nil {
		return rep, c.err
	}
	rep.Notes = append(rep.Notes, c.notes...)
	if len(rep.Problems) > 0 {
		rep.Elapsed = time.Since(began).Round(time.Millisecond).String()
		return rep, fmt.Errorf("%w: %d problems", ErrProblems, len(rep.Problems))
	}
	for i := 0; i < len(subs); i += o.Batch {
		batch := subs[i:min(i+o.Batch, len(subs))]
		var br Report
		err := st.InTx(ctx, func(tx *store.Tx) error {
			br = Report{}
			if err := lockImport(ctx, tx); err != nil {
				return err
			}
			// Subscriber and contact events say they came from an import.
			tx.SetEventSource(store.SourceImport)
			w := writer{c: c, tx: tx, im: im, rep: &br}
			if err := w.batch(ctx, batch); err != nil {
				return err
			}
			if o.DryRun {
				return errDryRun
			}
			return nil
		})
		var verr rowError
		switch {
		case errors.As(err, &verr):
			rep.Problems = append(rep.Problems, verr.problems...)
			rep.Elapsed = time.Since(began).Round(time.Millisecond).String()
			return rep, fmt.Errorf("%w: %d problems", ErrProblems, len(rep.Problems))
		case err != nil && !errors.Is(err, errDryRun):
			return rep, err
		}
		rep.add(br)
		if o.Progress != nil {
			o.Progress(Progress{Subscribers: i + len(batch), Total: len(subs), Elapsed: time.Since(began)})
		}
	}
	rep.Elapsed = time.Since(began).Round(time.Millisecond).String()
	return rep, nil
}

func (r *Report) add(b Report) {
	for _, p := range []struct{ to, from *Counts }{{&r.Subscribers, &b.Subscribers}, {&r.Agreements, &b.Agreements}, {&r.Subscriptions, &b.Subscriptions}} {
		p.to.Created += p.from.Created
		p.to.Updated += p.from.Updated
		p.to.Unchanged += p.from.Unchanged
		p.to.Skipped += p.from.Skipped
	}
	r.Notes = append(r.Notes, b.Notes...)
}

// rowError carries the problems a batch found while writing.
type rowError struct{ problems []Problem }

func (e rowError) Error() string { return fmt.Sprintf("%d problems", len(e.problems)) }

// checker checks rows without writing, and keeps what the writer needs:
// the tenant's organizations, and each row's checked form.
type checker struct {
	o     Options
	im    *engine.Importer
	orgs  map[string]store.Organization
	only  string // the organization id when the tenant has exactly one
	err   error  // a failure of the check itself (not a row's problem)
	notes []Problem
	seen  map[string]int
	agree map[*Agreement]store.PaymentAgreement
	plan  map[*Subscription]engine.ImportedSeries
}

func newChecker(ctx context.Context, st *store.Store, o Options, im *engine.Importer) (*checker, error) {
	c := &checker{o: o, im: im, orgs: map[string]store.Organization{}, seen: map[string]int{},
		agree: map[*Agreement]store.PaymentAgreement{}, plan: map[*Subscription]engine.ImportedSeries{}}
	cursor := ""
	for {
		page, next, err := st.ListOrganizations(ctx, store.OrganizationFilter{}, store.Page{Limit: 100, After: cursor})
		if err != nil {
			return nil, fmt.Errorf("tenantimport: organizations: %w", err)
		}
		for _, org := range page {
			c.orgs[org.ID] = org
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(c.orgs) == 1 {
		for id := range c.orgs {
			c.only = id
		}
	}
	return c, nil
}

// col is a field's name in the file's format: JSON Lines nests what CSV
// names by a column of its own.
func (c *checker) col(jsonName, csvName string) string {
	if c.o.Format == CSV {
		return csvName
	}
	return jsonName
}

// check returns the problems of subscriber s and its rows.
func (c *checker) check(ctx context.Context, s *Subscriber) []Problem {
	var ps []Problem
	add := func(line int, field, format string, args ...any) {
		ps = append(ps, Problem{File: c.o.File, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	col := c.col
	text := func(line int, field, v string, required bool, max int) {
		switch {
		case v == "" && required:
			add(line, field, "is required")
		case len(v) > max:
			add(line, field, "is longer than %d bytes", max)
		default:
			if p := validation.TextProblem(v, false); p != "" {
				add(line, field, "%s", p)
			}
		}
	}
	text(s.Line, col("externalId", "subscriberExternalId"), s.ExternalID, true, 200)
	if prev, dup := c.seen["s:"+s.ExternalID]; dup && s.ExternalID != "" {
		add(s.Line, col("externalId", "subscriberExternalId"), "%q is given again (first on line %d)", s.ExternalID, prev)
	}
	c.seen["s:"+s.ExternalID] = s.Line
	if s.SubscriberNumber < 0 || s.SubscriberNumber > store.MaxSubscriberNumber {
		add(s.Line, "subscriberNumber", "%d is not between 1 and %d", s.SubscriberNumber, int64(store.MaxSubscriberNumber))
	}
	if s.SubscriberNumber != 0 {
		key := fmt.Sprintf("n:%d", s.SubscriberNumber)
		if prev, dup := c.seen[key]; dup {
			add(s.Line, "subscriberNumber", "%d is given again (first on line %d)", s.SubscriberNumber, prev)
		}
		c.seen[key] = s.Line
	}
	text(s.Line, "name", s.Name, true, 200)
	text(s.Line, "email", s.Email, false, 320)
	if s.Email != "" && !strings.Contains(s.Email, "@") {
		add(s.Line, "email", "%q is not an email address", s.Email)
	}
	text(s.Line, "phone", s.Phone, false, 50)
	for _, cc := range []struct{ field, code string }{{"country", s.Country}, {col("address.country", "addressCountry"), s.Address.Country}} {
		if cc.code != "" && !country.Valid(cc.code) {
			add(s.Line, cc.field, "%q is not an ISO 3166-1 alpha-2 country code", cc.code)
		}
	}
	for i, ct := range s.Contacts {
		if ct.Role != string(store.ContactInvoice) && ct.Role != string(store.ContactDelivery) {
			add(s.Line, fmt.Sprintf("contacts[%d].role", i), "%q is not Invoice or Delivery", ct.Role)
		}
		if ct.Address.Country != "" && !country.Valid(ct.Address.Country) {
			add(s.Line, col(fmt.Sprintf("contacts[%d].address.country", i), "invoiceContactCountry"), "%q is not an ISO 3166-1 alpha-2 country code", ct.Address.Country)
		}
	}
	agreements := map[string]bool{}
	for i := range s.PaymentAgreements {
		a := &s.PaymentAgreements[i]
		srcField := a.field + col("sourceId", "agreementSourceId")
		text(a.Line, srcField, a.SourceID, true, 200)
		if prev, dup := c.seen["a:"+a.SourceID]; dup && a.SourceID != "" {
			add(a.Line, srcField, "%q is given again (first on line %d)", a.SourceID, prev)
		}
		c.seen["a:"+a.SourceID] = a.Line
		agreements[a.SourceID] = true
		if p, ok := c.agreement(ctx, a); !ok {
			ps = append(ps, p...)
		}
	}
	for i := range s.Subscriptions {
		sub := &s.Subscriptions[i]
		ps = append(ps, c.subscription(ctx, sub, agreements, col)...)
	}
	return ps
}

// agreement checks a through its provider and keeps its canonical form.
func (c *checker) agreement(ctx context.Context, a *Agreement) ([]Problem, bool) {
	typeField := a.field + "providerType"
	fail := func(field, format string, args ...any) ([]Problem, bool) {
		return []Problem{{File: c.o.File, Line: a.Line, Field: field, Message: fmt.Sprintf(format, args...)}}, false
	}
	switch {
	case a.ProviderType == "":
		return fail(typeField, "is required: one of %s", strings.Join(c.o.Providers.Types(), ", "))
	case strings.EqualFold(a.ProviderType, store.ProviderAutogiro), strings.EqualFold(a.ProviderType, store.ProviderAvtaleGiro):
		return fail(typeField, "%s mandates are not imported: they come from the bank's mandate files (docs/AUTOGIRO.md, docs/AVTALEGIRO.md); import the subscription on Invoice and let the mandate file move it", a.ProviderType)
	}
	prov, ok := c.o.Providers.Lookup(a.ProviderType)
	if !ok {
		return fail(typeField, "%q is not a provider type: one of %s", a.ProviderType, strings.Join(c.o.Providers.Types(), ", "))
	}
	pa := provider.Agreement{Reference: a.ProviderAgreementReference, PaymentMethod: a.PaymentMethod}
	err := prov.Check(ctx, &pa)
	var verrs validation.Errors
	switch {
	case errors.As(err, &verrs):
		var ps []Problem
		for _, fe := range verrs {
			ps = append(ps, Problem{File: c.o.File, Line: a.Line, Field: a.field + fe.Field, Message: fe.Message})
		}
		return ps, false
	case err != nil:
		c.err = fmt.Errorf("tenantimport: check %s agreement: %w", prov.Type, err)
		return nil, false
	}
	a.ProviderType = prov.Type
	c.agree[a] = store.PaymentAgreement{ProviderType: prov.Type, ProviderAgreementReference: pa.Reference, PaymentMethod: pa.PaymentMethod}
	return nil, true
}

// subscription checks a running subscription against the catalog and the
// calendar (engine.Importer.Check) and keeps the series to import.
func (c *checker) subscription(ctx context.Context, s *Subscription, agreements map[string]bool, col func(string, string) string) []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{File: c.o.File, Line: s.Line, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	srcField := s.field + col("sourceId", "subscriptionSourceId")
	switch {
	case s.SourceID == "":
		add(srcField, "is required")
	case len(s.SourceID) > 200 || validation.TextProblem(s.SourceID, false) != "":
		add(srcField, "must be a single line of at most 200 bytes")
	}
	if prev, dup := c.seen["u:"+s.SourceID]; dup && s.SourceID != "" {
		add(srcField, "%q is given again (first on line %d)", s.SourceID, prev)
	}
	c.seen["u:"+s.SourceID] = s.Line
	if s.PaymentAgreementSourceID != "" && !agreements[s.PaymentAgreementSourceID] {
		add(s.field+"paymentAgreementSourceId", "%q is none of this subscriber's agreements in the file", s.PaymentAgreementSourceID)
	}
	orgID := s.OrganizationID
	if orgID == "" {
		orgID = c.only
	}
	org, ok := c.orgs[orgID]
	switch {
	case s.OrganizationID == "" && c.only == "":
		add(s.field+"organizationId", "is required: the tenant has %d organizations", len(c.orgs))
	case !ok:
		add(s.field+"organizationId", "no organization %s in this tenant", s.OrganizationID)
	}
	if s.TemplatePackageID == "" {
		add(s.field+"templatePackageId", "is required")
	}
	var loc *time.Location
	if ok {
		var err error
		if loc, err = period.LoadZone(org.TimeZone); err != nil {
			c.err = fmt.Errorf("tenantimport: organization %s: %w", org.ID, err)
			return ps
		}
	}
	date := func(field, v string, required bool) time.Time {
		if v == "" {
			if required {
				add(s.field+field, "is required")
			}
			return time.Time{}
		}
		if loc == nil {
			return time.Time{}
		}
		t, err := parseDate(v, loc)
		if err != nil {
			add(s.field+field, "%s", err)
		}
		return t
	}
	anchor := date("seriesStart", s.SeriesStart, false)
	start := date("periodStart", s.PeriodStart, true)
	end := date("periodEnd", s.PeriodEnd, true)
	if len(ps) > 0 {
		return ps
	}
	choices := catalog.Choices{BillingPlanID: s.BillingPlanID, Units: s.Units, Price: s.PriceOverride}
	n := engine.ImportedSeries{OrganizationID: org.ID, TimeZone: org.TimeZone, TemplatePackageID: s.TemplatePackageID,
		Choices: choices, StepPeriod: s.ChainStepPeriod, Anchor: anchor, PeriodStart: start, PeriodEnd: end}
	sub, verrs, err := c.im.Check(ctx, n, c.o.Now)
	if err != nil {
		c.err = fmt.Errorf("tenantimport: line %d: %w", s.Line, err)
		return ps
	}
	for _, fe := range verrs {
		field := fe.Field
		if field == "price" {
			field = "priceOverride"
		}
		add(s.field+field, "%s", fe.Message)
	}
	if len(verrs) == 0 && s.Price != nil {
		want := sub.Package.TotalPrice
		if !s.Price.Equal(want.Decimal()) {
			add(s.field+"price", "the source billed %s for this period, but %s with these choices costs %s %s a period: give priceOverride (or the units) the source used",
				s.Price.String(), s.TemplatePackageID, want.String(), sub.Package.Currency)
		}
	}
	if len(ps) == 0 {
		c.plan[s] = n
		if sub.RenewAt != nil && !sub.RenewAt.After(c.o.Now) {
			c.notes = append(c.notes, Problem{File: c.o.File, Line: s.Line, Field: s.field + "periodEnd", Message: fmt.Sprintf(
				"the renewal of this period was due at %s (%d days before its end): Kadens bills the next period at its next run; if the source has already created and billed it, import that period instead",
				sub.RenewAt.In(loc).Format(time.RFC3339), sub.Package.BillingPlan.MinimumDueDays)})
		}
	}
	return ps
}

// parseDate reads a date (2026-03-31: that day's midnight in loc) or an
// RFC 3339 time.
func parseDate(v string, loc *time.Location) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
		return period.StartOfDay(t, loc), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2026-03-31) nor an RFC 3339 time (2026-03-31T00:00:00+02:00)", v)
	}
	return t.UTC(), nil
}

// writer writes one batch in its transaction.
type writer struct {
	c   *checker
	tx  *store.Tx
	im  *engine.Importer
	rep *Report
}

func (w *writer) problem(line int, field, format string, args ...any) error {
	return rowError{problems: []Problem{{File: w.c.o.File, Line: line, Field: field, Message: fmt.Sprintf(format, args...)}}}
}

func (w *writer) note(line int, field, format string, args ...any) {
	w.rep.Notes = append(w.rep.Notes, Problem{File: w.c.o.File, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// batch writes subscribers subs, their agreements and subscriptions.
func (w *writer) batch(ctx context.Context, subs []*Subscriber) error {
	now := w.c.o.Now
	ext := make([]string, len(subs))
	var agreementIDs, subscriptionIDs []string
	for i, s := range subs {
		ext[i] = s.ExternalID
		for _, a := range s.PaymentAgreements {
			agreementIDs = append(agreementIDs, a.SourceID)
		}
		for _, u := range s.Subscriptions {
			subscriptionIDs = append(subscriptionIDs, u.SourceID)
		}
	}
	existing, err := w.tx.SubscribersByExternalID(ctx, ext)
	if err != nil {
		return err
	}
	doneAgreements, err := ImportRecords(ctx, w.tx, KindPaymentAgreement, agreementIDs)
	if err != nil {
		return err
	}
	doneSubs, err := ImportRecords(ctx, w.tx, KindSubscription, subscriptionIDs)
	if err != nil {
		return err
	}
	var (
		records []ImportRecord
		periods []store.Subscription
	)
	for _, s := range subs {
		sub, err := w.subscriber(ctx, s, existing)
		if err != nil {
			return err
		}
		agreementOf := map[string]string{}
		for i := range s.PaymentAgreements {
			a := &s.PaymentAgreements[i]
			want := w.c.agree[a]
			fp := fingerprint(want.ProviderType, want.ProviderAgreementReference, want.PaymentMethod)
			if rec, ok := doneAgreements[a.SourceID]; ok {
				agreementOf[a.SourceID] = rec.KadensID
				if rec.Fingerprint == fp {
					w.rep.Agreements.Unchanged++
				} else {
					w.rep.Agreements.Skipped++
					w.note(a.Line, a.field+w.c.col("sourceId", "agreementSourceId"), "agreement %q was imported on %s as %s and differs now; the import does not change it (use the API)",
						a.SourceID, rec.ImportedAt.Format(time.DateOnly), rec.KadensID)
				}
				continue
			}
			want.SubscriberID = sub.ID
			created, _, err := w.tx.CreateAgreement(ctx, want, now)
			if errors.Is(err, store.ErrAgreementReferenceTaken) {
				return w.problem(a.Line, a.field+"providerAgreementReference", "%q is the reference of another live %s agreement of this tenant",
					want.ProviderAgreementReference, want.ProviderType)
			}
			if err != nil {
				return fmt.Errorf("tenantimport: line %d: %w", a.Line, err)
			}
			agreementOf[a.SourceID] = created.ID
			records = append(records, ImportRecord{Kind: KindPaymentAgreement, SourceID: a.SourceID, KadensID: created.ID, Fingerprint: fp, ImportedAt: now})
			w.rep.Agreements.Created++
		}
		for i := range s.Subscriptions {
			u := &s.Subscriptions[i]
			n := w.c.plan[u]
			fp := fingerprint(u.SourceID, n.OrganizationID, n.TemplatePackageID, u.PaymentAgreementSourceID, u.BillingPlanID, u.Units, u.PriceOverride,
				n.StepPeriod, n.Anchor, n.PeriodStart, n.PeriodEnd)
			if rec, ok := doneSubs[u.SourceID]; ok {
				if rec.Fingerprint == fp {
					w.rep.Subscriptions.Unchanged++
				} else {
					w.rep.Subscriptions.Skipped++
					w.note(u.Line, u.field+w.c.col("sourceId", "subscriptionSourceId"), "subscription %q was imported on %s as %s and differs now; the import does not change running subscriptions (change or cancel it through the API)",
						u.SourceID, rec.ImportedAt.Format(time.DateOnly), rec.KadensID)
				}
				continue
			}
			n.SubscriberID = sub.ID
			agreementID, ok := agreementOf[u.PaymentAgreementSourceID]
			if !ok {
				a, err := w.tx.InvoiceAgreement(ctx, sub.ID, now)
				if err != nil {
					return fmt.Errorf("tenantimport: line %d: %w", u.Line, err)
				}
				agreementID = a.ID
			}
			n.PaymentAgreementID = &agreementID
			p, err := w.im.Write(ctx, w.tx, n, now)
			var verrs validation.Errors
			if errors.As(err, &verrs) {
				return w.problem(u.Line, u.field+verrs[0].Field, "%s", verrs[0].Message)
			}
			if err != nil {
				return fmt.Errorf("tenantimport: line %d: %w", u.Line, err)
			}
			periods = append(periods, p)
			records = append(records, ImportRecord{Kind: KindSubscription, SourceID: u.SourceID, KadensID: p.ID, Fingerprint: fp, ImportedAt: now})
			w.rep.Subscriptions.Created++
		}
	}
	if err := w.im.Insert(ctx, w.tx, periods, now); err != nil {
		return err
	}
	return insertImportRecords(ctx, w.tx, records)
}

// subscriber creates s, updates it when its fields changed, or leaves it.
func (w *writer) subscriber(ctx context.Context, s *Subscriber, existing map[string]store.Subscriber) (store.Subscriber, error) {
	want := store.Subscriber{ExternalID: s.ExternalID, SubscriberNumber: s.SubscriberNumber, Name: s.Name, Email: s.Email,
		Phone: s.Phone, Country: s.Country, Address: store.Address(s.Address), Contacts: []store.Contact{}}
	for _, c := range s.Contacts {
		want.Contacts = append(want.Contacts, store.Contact{Role: store.ContactRole(c.Role), Name: c.Name, Email: c.Email, Phone: c.Phone,
			Address: store.Address(c.Address)})
	}
	numberField := "subscriberNumber"
	old, ok := existing[s.ExternalID]
	if !ok {
		created, err := w.tx.InsertSubscriber(ctx, want, w.c.o.Now)
		if errors.Is(err, store.ErrSubscriberNumberRange) {
			return store.Subscriber{}, w.problem(s.Line, numberField, "%d is not between 1 and %d", s.SubscriberNumber, int64(store.MaxSubscriberNumber))
		}
		if errors.Is(err, store.ErrSubscriberNumberTaken) {
			return store.Subscriber{}, w.problem(s.Line, numberField, "%d is already the number of another subscriber", s.SubscriberNumber)
		}
		if err != nil {
			return store.Subscriber{}, fmt.Errorf("tenantimport: line %d: %w", s.Line, err)
		}
		w.rep.Subscribers.Created++
		return created, nil
	}
	same := old.Name == want.Name && old.Email == want.Email && old.Phone == want.Phone && old.Country == want.Country &&
		old.Address == want.Address && slices.Equal(old.Contacts, want.Contacts) &&
		(want.SubscriberNumber == 0 || want.SubscriberNumber == old.SubscriberNumber)
	if same {
		w.rep.Subscribers.Unchanged++
		return old, nil
	}
	want.ID = old.ID
	updated, err := w.tx.UpdateSubscriber(ctx, want, w.c.o.Now)
	if errors.Is(err, store.ErrSubscriberNumberRange) {
		return store.Subscriber{}, w.problem(s.Line, numberField, "%d is not between 1 and %d", s.SubscriberNumber, int64(store.MaxSubscriberNumber))
	}
	if errors.Is(err, store.ErrSubscriberNumberTaken) {
		return store.Subscriber{}, w.problem(s.Line, numberField, "%d is already the number of another subscriber", s.SubscriberNumber)
	}
	if err != nil {
		return store.Subscriber{}, fmt.Errorf("tenantimport: line %d: %w", s.Line, err)
	}
	w.rep.Subscribers.Updated++
	return updated, nil
}

// fingerprint hashes the values a row was imported with.
func fingerprint(vals ...any) string {
	b, _ := json.Marshal(vals)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// Providers are the agreement types an import creates, with their checks:
// Invoice, EHF, OIO and External. (Autogiro and AvtaleGiro mandates come
// from the bank's files, not from an import.)
func Providers() *provider.Registry {
	return provider.NewRegistry(invoice.Provider, ehf.Provider, oio.Provider, external.Provider)
}
