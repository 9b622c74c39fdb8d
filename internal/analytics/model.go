// Package analytics serves the read-only OData v4 analytics API: the entity
// model over Kadens' tables (model.go), the translation of parsed query
// options (internal/odata) into parameterized SQL for SQLite and PostgreSQL
// (sql.go, dialect.go), and the HTTP handler that streams OData JSON
// (handler.go, metadata.go). Every statement it builds starts from a set's
// source filtered by the authenticated tenant (query.from); identifiers
// come only from this model, values only as parameters.
package analytics

import (
	"fmt"

	"github.com/kadens/kadens/internal/substatus"
)

// Edm is the type of a property.
type Edm int

// Property types. Money is Edm.Decimal in major units; in SQL it is an
// integer at scale moneyScale (see dialect.money).
const (
	Guid Edm = iota
	String
	Int
	Bool
	Money
	Decimal // a plain decimal number (VAT rates), as text in the database
	Date    // Edm.Date: 'YYYY-MM-DD' text on both engines
	Time    // Edm.DateTimeOffset: timestamptz on PostgreSQL, fixed-width UTC text on SQLite
	Double  // averages of $apply
)

func (e Edm) name() string {
	return [...]string{"Edm.Guid", "Edm.String", "Edm.Int64", "Edm.Boolean", "Edm.Decimal", "Edm.Decimal", "Edm.Date", "Edm.DateTimeOffset", "Edm.Double"}[e]
}

// Prop is a structural property: its name, type and how to read it from a
// row of the set's source aliased a.
type Prop struct {
	Name     string
	Type     Edm
	Nullable bool
	Enum     []string // allowed values of a string enum, for $filter checks and docs
	sql      func(b *builder, a string) string
	// is, when set, is the condition "the property equals value" (one of
	// Enum) in a form an index can serve; $filter's eq, ne and in use it
	// instead of comparing sql, which may be a computed expression.
	is func(b *builder, a, value string) string
	// minor and currency name the columns of a Money amount (minor units of
	// the row's currency), so a sum can add minor units per currency and
	// scale each currency's total once (see apply).
	minor, currency string
	// column is the source column a plain property reads ("" for computed
	// ones), so NewModel can check what navigation properties join on.
	column string
}

// Nav is a navigation property: rows of Target whose To column equals this
// row's From column. Both must be columns of Guid properties (NewModel
// checks it), which are uuid on PostgreSQL in every source
// (TestSourceColumnTypes): a join or an IN between a uuid and a text
// column is an error there, not an empty result.
type Nav struct {
	Name, Target string
	Many         bool
	From, To     string // column names (of this set, of Target)
	Partner      string
}

// Set is an entity set and its entity type.
type Set struct {
	Name, Type string
	// source is the table, or a derived table per dialect; it has a
	// tenant_id column.
	source func(d *dialect) string
	Key    string // property name; its column is Prop(Key).sql
	Props  []Prop
	Navs   []Nav
}

// Prop returns the property named name (exact spelling, as OData wants).
func (s *Set) Prop(name string) (*Prop, bool) {
	for i := range s.Props {
		if s.Props[i].Name == name {
			return &s.Props[i], true
		}
	}
	return nil, false
}

// Nav returns the navigation property named name.
func (s *Set) Nav(name string) (*Nav, bool) {
	for i := range s.Navs {
		if s.Navs[i].Name == name {
			return &s.Navs[i], true
		}
	}
	return nil, false
}

// Model is every entity set, by name.
type Model struct {
	Sets  []*Set
	byNam map[string]*Set
}

// Set returns the entity set named name.
func (m *Model) Set(name string) (*Set, bool) { s, ok := m.byNam[name]; return s, ok }

func col(c string) func(*builder, string) string {
	return func(_ *builder, a string) string { return a + "." + c }
}

func p(name string, t Edm, column string) Prop {
	return Prop{Name: name, Type: t, sql: col(column), column: column}
}
func pn(name string, t Edm, column string) Prop {
	return Prop{Name: name, Type: t, sql: col(column), Nullable: true, column: column}
}
func enum(name, column string, values ...string) Prop {
	return Prop{Name: name, Type: String, sql: col(column), Enum: values, column: column}
}

// money is an amount in minor units of the row's currency column.
func amount(name, column, currency string) Prop {
	return Prop{Name: name, Type: Money, sql: func(b *builder, a string) string { return b.d.money(a+"."+column, a+"."+currency) },
		minor: column, currency: currency}
}

// NewModel builds the entity model. It panics on an inconsistent model (a
// programming error, caught by every test).
func NewModel() *Model {
	id := func() Prop { return p("Id", Guid, "id") }
	created := func() Prop { return p("CreatedAt", Time, "created_at") }
	table := func(name string) func(*dialect) string { return func(*dialect) string { return name } }
	sets := []*Set{
		{Name: "Organizations", Type: "Organization", source: table("organizations"), Key: "Id", Props: []Prop{
			id(), p("Name", String, "name"), p("OrganizationNumber", String, "organization_number"), p("Country", String, "country"),
			p("Currency", String, "currency"), p("TimeZone", String, "time_zone"), p("PricesIncludeVat", Bool, "prices_include_vat"),
			p("City", String, "address_city"), created(),
		}, Navs: []Nav{
			{Name: "Subscriptions", Target: "Subscriptions", Many: true, From: "id", To: "organization_id", Partner: "Organization"},
			{Name: "Invoices", Target: "Invoices", Many: true, From: "id", To: "organization_id", Partner: "Organization"},
		}},
		{Name: "Products", Type: "Product", source: table("products"), Key: "Id", Props: []Prop{
			id(), p("Name", String, "name"), p("Description", String, "description"), p("Category", String, "category"),
			{Name: "VatRate", Type: Decimal, sql: func(b *builder, a string) string { return b.d.decimalText(a + ".vat_rate") }},
			p("Active", Bool, "active"), created(),
		}, Navs: []Nav{
			{Name: "InvoiceLines", Target: "InvoiceLines", Many: true, From: "id", To: "product_id", Partner: "Product"},
		}},
		{Name: "BillingPlans", Type: "BillingPlan", source: table("billing_plans"), Key: "Id", Props: []Prop{
			id(), p("Name", String, "name"), p("Description", String, "description"),
			enum("IntervalUnit", "interval_unit", "Day", "Week", "Month", "Year"), p("IntervalCount", Int, "interval_count"),
			p("MinimumDueDays", Int, "minimum_due_days"), p("PaymentTermsDays", Int, "payment_terms_days"), created(),
		}, Navs: []Nav{
			{Name: "Subscriptions", Target: "Subscriptions", Many: true, From: "id", To: "billing_plan_id", Partner: "BillingPlan"},
		}},
		{Name: "Packages", Type: "Package", source: table("template_packages"), Key: "Id", Props: []Prop{
			id(), p("Name", String, "name"), p("Description", String, "description"), p("Currency", String, "currency"),
			amount("Price", "price", "currency"), p("Units", Int, "units"), pn("NumberOfEditions", Int, "number_of_editions"),
			p("AutomaticStop", Bool, "automatic_stop"), pn("ContractBindingPeriods", Int, "contract_binding_periods"),
			pn("PackageChainId", Guid, "package_chain_id"), pn("ArchivedAt", Time, "archived_at"), created(),
		}, Navs: []Nav{
			{Name: "Orders", Target: "Orders", Many: true, From: "id", To: "template_package_id", Partner: "Package"},
		}},
		{Name: "Subscribers", Type: "Subscriber", source: table("subscribers"), Key: "Id", Props: []Prop{
			id(), p("SubscriberNumber", Int, "subscriber_number"), pn("ExternalId", String, "external_id"),
			p("Name", String, "name"), p("Email", String, "email"), p("Phone", String, "phone"),
			p("AddressLine1", String, "address_line1"), p("AddressLine2", String, "address_line2"),
			p("PostalCode", String, "address_postal_code"), p("City", String, "address_city"), p("Country", String, "country"),
			created(), p("UpdatedAt", Time, "updated_at"),
		}, Navs: []Nav{
			{Name: "SubscriberAccounts", Target: "SubscriberAccounts", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "Subscriptions", Target: "Subscriptions", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "Orders", Target: "Orders", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "Invoices", Target: "Invoices", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "PaymentDemands", Target: "PaymentDemands", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "Payments", Target: "Payments", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "CreditNotes", Target: "CreditNotes", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "Reminders", Target: "Reminders", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
			{Name: "PaymentAgreements", Target: "PaymentAgreements", Many: true, From: "id", To: "subscriber_id", Partner: "Subscriber"},
		}},
		{Name: "SubscriberAccounts", Type: "SubscriberAccount", source: table("subscriber_accounts"), Key: "Id", Props: []Prop{
			id(), p("SubscriberId", Guid, "subscriber_id"), p("Currency", String, "currency"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "SubscriberAccounts"},
		}},
		{Name: "Subscriptions", Type: "Subscription", source: subscriptionSource, Key: "Id", Props: []Prop{
			id(), p("SubscriberId", Guid, "subscriber_id"), p("OrganizationId", Guid, "organization_id"), pn("OrderId", Guid, "order_id"),
			pn("PaymentAgreementId", Guid, "payment_agreement_id"), p("Currency", String, "currency"),
			{Name: "Status", Type: String, Enum: substatus.All, sql: subscriptionStatus, is: subscriptionStatusIs},
			p("PeriodIndex", Int, "period_index"), p("PeriodStart", Time, "period_start"), p("PeriodEnd", Time, "period_end"),
			pn("ChainId", Guid, "chain_id"), pn("ChainStep", Int, "chain_step"), p("StepPeriod", Int, "step_period"),
			pn("PreviousId", Guid, "previous_id"), pn("NextId", Guid, "next_id"), pn("RenewAt", Time, "renew_at"),
			pn("CancelledAt", Time, "cancelled_at"), pn("CancelEffectiveAt", Time, "cancel_effective_at"),
			p("CancelReason", String, "cancel_reason"), pn("DeactivatedAt", Time, "deactivated_at"),
			p("PackageName", String, "package_name"), p("Price", Money, "price"),
			p("BillingPlanId", Guid, "billing_plan_id"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "Subscriptions"},
			{Name: "Organization", Target: "Organizations", From: "organization_id", To: "id", Partner: "Subscriptions"},
			{Name: "BillingPlan", Target: "BillingPlans", From: "billing_plan_id", To: "id", Partner: "Subscriptions"},
			{Name: "Invoices", Target: "Invoices", Many: true, From: "id", To: "subscription_id", Partner: "Subscription"},
		}},
		{Name: "Orders", Type: "Order", source: table("orders"), Key: "Id", Props: []Prop{
			id(), enum("Status", "status", "Created", "Completed", "Cancelled"), p("OrganizationId", Guid, "organization_id"),
			p("PackageId", Guid, "template_package_id"), pn("SubscriberId", Guid, "subscriber_id"), pn("SubscriptionId", Guid, "subscription_id"),
			pn("PaymentAgreementId", Guid, "payment_agreement_id"), pn("RequestedStart", Time, "requested_start"), created(),
			pn("CompletedAt", Time, "completed_at"), pn("CancelledAt", Time, "cancelled_at"),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "Orders"},
			{Name: "Package", Target: "Packages", From: "template_package_id", To: "id", Partner: "Orders"},
		}},
		{Name: "Invoices", Type: "Invoice", source: table("invoices"), Key: "Id", Props: []Prop{
			id(), p("InvoiceNumber", Int, "invoice_number"), p("OrganizationId", Guid, "organization_id"),
			p("PaymentDemandId", Guid, "payment_demand_id"), p("AccountId", Guid, "account_id"), p("SubscriberId", Guid, "subscriber_id"),
			pn("SubscriptionId", Guid, "subscription_id"), pn("PaymentAgreementId", Guid, "payment_agreement_id"), p("Currency", String, "currency"),
			enum("Status", "status", "Issued", "PartiallyPaid", "Paid", "Credited"), p("IssuedAt", Time, "issued_at"), p("DueAt", Time, "due_at"),
			p("IssueDate", Date, "issue_date"), p("DueDate", Date, "due_date"), pn("PeriodStart", Time, "period_start"), pn("PeriodEnd", Time, "period_end"),
			amount("Net", "net", "currency"), amount("Vat", "vat", "currency"), amount("Gross", "gross", "currency"), p("Kid", String, "kid"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "Invoices"},
			{Name: "Organization", Target: "Organizations", From: "organization_id", To: "id", Partner: "Invoices"},
			{Name: "Subscription", Target: "Subscriptions", From: "subscription_id", To: "id", Partner: "Invoices"},
			{Name: "Lines", Target: "InvoiceLines", Many: true, From: "id", To: "invoice_id", Partner: "Invoice"},
			{Name: "Payments", Target: "Payments", Many: true, From: "id", To: "invoice_id", Partner: "Invoice"},
			{Name: "CreditNotes", Target: "CreditNotes", Many: true, From: "id", To: "invoice_id", Partner: "Invoice"},
			{Name: "PaymentDemand", Target: "PaymentDemands", From: "payment_demand_id", To: "id", Partner: "Invoice"},
		}},
		{Name: "InvoiceLines", Type: "InvoiceLine", source: invoiceLineSource, Key: "Id", Props: []Prop{
			p("Id", String, "id"), p("InvoiceId", Guid, "invoice_id"), p("LineNumber", Int, "line_number"),
			enum("Kind", "kind", "Product", "AdditionalProduct", "Charge", "Allowance"), pn("ProductId", Guid, "product_id"),
			p("Description", String, "description"), p("Quantity", Int, "quantity"), p("Currency", String, "currency"),
			{Name: "VatRate", Type: Decimal, sql: func(b *builder, a string) string { return b.d.decimalText(a + ".vat_rate") }},
			p("UnitPrice", Money, "unit_price"), p("Discount", Money, "discount"), p("Net", Money, "net"), p("Vat", Money, "vat"), p("Gross", Money, "gross"),
			p("IssuedAt", Time, "issued_at"), p("IssueDate", Date, "issue_date"), p("SubscriberId", Guid, "subscriber_id"),
		}, Navs: []Nav{
			{Name: "Invoice", Target: "Invoices", From: "invoice_id", To: "id", Partner: "Lines"},
			{Name: "Product", Target: "Products", From: "product_id", To: "id", Partner: "InvoiceLines"},
		}},
		{Name: "PaymentDemands", Type: "PaymentDemand", source: table("payment_demands"), Key: "Id", Props: []Prop{
			id(), enum("Kind", "kind", "Period"), p("InvoiceId", Guid, "invoice_id"), p("AccountId", Guid, "account_id"),
			p("SubscriberId", Guid, "subscriber_id"), pn("SubscriptionId", Guid, "subscription_id"), p("OrganizationId", Guid, "organization_id"),
			p("Currency", String, "currency"), amount("Amount", "amount", "currency"), amount("PaidAmount", "paid_amount", "currency"),
			amount("CreditedAmount", "credited_amount", "currency"), enum("Status", "status", "Open", "PartiallyPaid", "Paid", "Credited"),
			p("IssuedAt", Time, "issued_at"), p("DueAt", Time, "due_at"), p("RemindersSent", Int, "reminders_sent"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "PaymentDemands"},
			{Name: "Invoice", Target: "Invoices", From: "invoice_id", To: "id", Partner: "PaymentDemand"},
			{Name: "Payments", Target: "Payments", Many: true, From: "id", To: "payment_demand_id", Partner: "PaymentDemand"},
			{Name: "Reminders", Target: "Reminders", Many: true, From: "id", To: "payment_demand_id", Partner: "PaymentDemand"},
		}},
		{Name: "Payments", Type: "Payment", source: table("payments"), Key: "Id", Props: []Prop{
			id(), p("PaymentDemandId", Guid, "payment_demand_id"), p("InvoiceId", Guid, "invoice_id"), p("AccountId", Guid, "account_id"),
			p("SubscriberId", Guid, "subscriber_id"), pn("PaymentAgreementId", Guid, "payment_agreement_id"),
			enum("Status", "status", "Succeeded", "Failed"), amount("Amount", "amount", "currency"), amount("Applied", "applied", "currency"),
			amount("Surplus", "surplus", "currency"), p("Currency", String, "currency"), p("PaidAt", Time, "paid_at"),
			p("Provider", String, "provider"), p("ProviderReference", String, "provider_reference"), pn("FailureReason", String, "failure_reason"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "Payments"},
			{Name: "Invoice", Target: "Invoices", From: "invoice_id", To: "id", Partner: "Payments"},
			{Name: "PaymentDemand", Target: "PaymentDemands", From: "payment_demand_id", To: "id", Partner: "Payments"},
			{Name: "PaymentAgreement", Target: "PaymentAgreements", From: "payment_agreement_id", To: "id", Partner: "Payments"},
		}},
		{Name: "CreditNotes", Type: "CreditNote", source: table("credit_notes"), Key: "Id", Props: []Prop{
			id(), p("CreditNoteNumber", Int, "credit_note_number"), p("OrganizationId", Guid, "organization_id"), p("InvoiceId", Guid, "invoice_id"),
			p("PaymentDemandId", Guid, "payment_demand_id"), p("AccountId", Guid, "account_id"), p("SubscriberId", Guid, "subscriber_id"),
			pn("SubscriptionId", Guid, "subscription_id"), p("Currency", String, "currency"), p("Reason", String, "reason"),
			p("IssuedAt", Time, "issued_at"), p("IssueDate", Date, "issue_date"), amount("Net", "net", "currency"), amount("Vat", "vat", "currency"),
			amount("Gross", "gross", "currency"), amount("Applied", "applied", "currency"), amount("Surplus", "surplus", "currency"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "CreditNotes"},
			{Name: "Invoice", Target: "Invoices", From: "invoice_id", To: "id", Partner: "CreditNotes"},
		}},
		{Name: "Reminders", Type: "Reminder", source: reminderSource, Key: "Id", Props: []Prop{
			id(), p("PaymentDemandId", Guid, "payment_demand_id"), p("InvoiceId", Guid, "invoice_id"), p("SubscriberId", Guid, "subscriber_id"),
			p("ReminderNumber", Int, "reminder_number"), p("Currency", String, "currency"), amount("Fee", "fee", "currency"), p("IssuedAt", Time, "issued_at"), created(),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "Reminders"},
			{Name: "PaymentDemand", Target: "PaymentDemands", From: "payment_demand_id", To: "id", Partner: "Reminders"},
		}},
		{Name: "PaymentAgreements", Type: "PaymentAgreement", source: table("payment_agreements"), Key: "Id", Props: []Prop{
			id(), p("SubscriberId", Guid, "subscriber_id"), p("ProviderType", String, "provider_type"),
			p("ProviderAgreementReference", String, "provider_agreement_reference"), p("PaymentMethod", String, "payment_method"),
			created(), pn("DeletedAt", Time, "deleted_at"),
		}, Navs: []Nav{
			{Name: "Subscriber", Target: "Subscribers", From: "subscriber_id", To: "id", Partner: "PaymentAgreements"},
			{Name: "Payments", Target: "Payments", Many: true, From: "id", To: "payment_agreement_id", Partner: "PaymentAgreement"},
		}},
		{Name: "Events", Type: "Event", source: table("events"), Key: "Id", Props: []Prop{
			id(), p("EventType", String, "event_type"), p("Subject", String, "subject"), p("EventTime", Time, "event_time"), created(),
			p("ActorKind", String, "actor_kind"), p("ActorId", String, "actor_id"), p("ActorLabel", String, "actor_label"),
		}},
	}
	// Names of INFO-Subscription's reporting data model where they fit the
	// contract (docs/ANALYTICS.md, "Reporting data model names").
	subs := sets[6]
	if subs.Name != "Subscriptions" {
		panic("analytics: Subscriptions moved")
	}
	sets = append(sets,
		&Set{Name: "CanceledSubscriptions", Type: subs.Type, Key: subs.Key, Props: subs.Props, Navs: subs.Navs,
			source: func(d *dialect) string {
				return "(SELECT * FROM " + subscriptionSource(d) + " c WHERE c.cancelled_at IS NOT NULL)"
			}},
		&Set{Name: "DailyPaidAmounts", Type: "DailyPaidAmount", source: dailyPaidSource, Key: "Id", Props: []Prop{
			p("Id", String, "id"), p("Date", Date, "paid_date"), p("OrganizationId", Guid, "organization_id"),
			p("Currency", String, "currency"), p("Amount", Money, "amount"), p("Payments", Int, "payments"),
		}},
	)
	m := &Model{Sets: sets, byNam: map[string]*Set{}}
	for _, s := range sets {
		m.byNam[s.Name] = s
	}
	for _, s := range sets {
		if _, ok := s.Prop(s.Key); !ok {
			panic(fmt.Sprintf("analytics: %s has no key property %s", s.Name, s.Key))
		}
		for _, n := range s.Navs {
			t, ok := m.byNam[n.Target]
			if !ok {
				panic(fmt.Sprintf("analytics: %s.%s targets unknown %s", s.Name, n.Name, n.Target))
			}
			back, ok := t.Nav(n.Partner)
			var backSet *Set
			if ok {
				backSet = m.byNam[back.Target]
			}
			if !ok || back.Partner != n.Name || backSet == nil || backSet.Type != s.Type {
				panic(fmt.Sprintf("analytics: %s.%s has no matching partner %s.%s", s.Name, n.Name, t.Name, n.Partner))
			}
			if !guidColumn(s, n.From) || !guidColumn(t, n.To) {
				panic(fmt.Sprintf("analytics: %s.%s joins %s.%s to %s.%s, not two Guid properties' columns", s.Name, n.Name, s.Name, n.From, t.Name, n.To))
			}
		}
	}
	return m
}

// guidColumn reports whether column c of s is read by a Guid property.
func guidColumn(s *Set, c string) bool {
	for _, p := range s.Props {
		if p.column == c && p.Type == Guid {
			return true
		}
	}
	return false
}

// subscriptionSource adds to each period row the package's name, total
// price and billing plan, read from its stored package document (the plan's
// id cast to uuid, the type of billing_plans.id that BillingPlan and
// BillingPlanId are compared with). Each is a
// scalar subquery rather than one LEFT JOIN: a statement that reads none of
// them (a count of a Status) then never touches the package, and
// PostgreSQL can count from an index without package_hash (with the join
// it keeps that column as needed even after removing the unused join, and
// falls back to reading the table).
func subscriptionSource(d *dialect) string {
	pkg := func(expr string) string {
		return "(SELECT " + expr + " FROM subscription_packages sp WHERE sp.tenant_id = s.tenant_id AND sp.hash = s.package_hash)"
	}
	doc := "sp.package"
	return `(SELECT s.*, ` + pkg(d.jsonText(doc, "name")) + ` AS package_name, ` +
		pkg(d.jsonScaled(doc, "totalPrice")) + ` AS price, ` + pkg(d.guidFromText(d.jsonText(doc, "billingPlan", "billingPlanId"))) + ` AS billing_plan_id
 FROM subscriptions s)`
}

// subscriptionStatus is the status the main API shows, at the request's
// time (internal/substatus).
func subscriptionStatus(b *builder, a string) string { return substatus.SQL(a, b.now()) }

// subscriptionStatusIs is "subscriptionStatus = value", written so that an
// index on the period serves it (internal/substatus).
func subscriptionStatusIs(b *builder, a, value string) string { return substatus.Is(a, value, b.now()) }

// invoiceLineSource unnests each invoice's lines document.
func invoiceLineSource(d *dialect) string {
	return d.invoiceLines()
}

// reminderSource gives each reminder its demand's currency (fees are in
// minor units of it).
func reminderSource(*dialect) string {
	return `(SELECT r.*, d.currency FROM reminders r JOIN payment_demands d ON d.tenant_id = r.tenant_id AND d.id = r.payment_demand_id)`
}

// dailyPaidSource sums the succeeded payments per UTC date of payment,
// organization (the invoice's) and currency.
func dailyPaidSource(d *dialect) string {
	day := d.date("p.paid_at")
	return "(SELECT p.tenant_id, " + d.concat(day, "'|'", d.guidText("i.organization_id"), "'|'", "p.currency") + " AS id, " +
		day + " AS paid_date, i.organization_id, p.currency, CAST(SUM(" + d.money("p.amount", "p.currency") + ") AS BIGINT) AS amount, " +
		"COUNT(*) AS payments FROM payments p JOIN invoices i ON i.tenant_id = p.tenant_id AND i.id = p.invoice_id" +
		" WHERE p.status = 'Succeeded' GROUP BY p.tenant_id, " + day + ", i.organization_id, p.currency)"
}
