package store

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/tenancy"
)

// Organization is a selling legal entity of a tenant (a merchant). Its time
// zone decides where billing periods start; its currency is the default for
// its plans; PricesIncludeVAT says whether its list prices are gross;
// KIDAlgorithm is the check digit algorithm of its invoices' KIDs. Its
// address, bank account and registrations are printed on its invoices so
// that they can be paid (docs/BILLING.md, "Seller details").
type Organization struct {
	ID                 string    `json:"id"`
	Name               string    `json:"name"`
	OrganizationNumber string    `json:"organizationNumber"`
	Country            string    `json:"country"`
	Currency           string    `json:"currency"`
	TimeZone           string    `json:"timeZone"`
	PricesIncludeVAT   bool      `json:"pricesIncludeVat"`
	LogoURL            string    `json:"logoUrl"`
	KIDAlgorithm       string    `json:"kidAlgorithm" enum:"MOD10,MOD11" description:"Check digit algorithm of the KID payment references on the organization's invoices."`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`

	// What its invoices need to be paid (docs/BILLING.md, "Seller details").
	Address          Address     `json:"address" description:"Postal address printed on invoices; all fields empty when not given."`
	BankAccount      BankAccount `json:"bankAccount" description:"The account invoices ask to be paid to; fields empty when not given."`
	VATRegistered    bool        `json:"vatRegistered" description:"Registered for VAT: Norwegian invoices print MVA after the organization number."`
	BusinessRegister bool        `json:"businessRegister" description:"In the Norwegian Register of Business Enterprises: invoices print Foretaksregisteret."`
}

// BankAccount is where an organization is paid: a Norwegian account
// number (kontonummer, 11 digits) for domestic payments with a KID, and an
// IBAN with the bank's BIC for payments from abroad. Values are canonical
// (bankaccount.Parse*): digits or upper-case letters without spaces.
type BankAccount struct {
	AccountNumber string `json:"accountNumber" example:"86011117947" description:"Norwegian account number (kontonummer): 11 digits."`
	IBAN          string `json:"iban" example:"NO9386011117947" description:"IBAN, compact and upper-case."`
	BIC           string `json:"bic" example:"DNBANOKK" description:"BIC (SWIFT code) of the IBAN's bank: 8 or 11 characters."`
}

const organizationColumns = `id, name, organization_number, country, currency, time_zone, prices_include_vat, logo_url,
	kid_algorithm, address_line1, address_line2, address_postal_code, address_city, address_country, bank_account_number,
	iban, bic, vat_registered, business_register, created_at, updated_at`

func scanOrganization(row scanner) (Organization, error) {
	var o Organization
	err := row.Scan(&o.ID, &o.Name, &o.OrganizationNumber, &o.Country, &o.Currency, &o.TimeZone,
		&o.PricesIncludeVAT, &o.LogoURL, &o.KIDAlgorithm, &o.Address.Line1, &o.Address.Line2, &o.Address.PostalCode,
		&o.Address.City, &o.Address.Country, &o.BankAccount.AccountNumber, &o.BankAccount.IBAN, &o.BankAccount.BIC,
		&o.VATRegistered, &o.BusinessRegister, &o.CreatedAt, &o.UpdatedAt)
	o.CreatedAt, o.UpdatedAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC()
	return o, err
}

// CreateOrganization stores o under the context's tenant with a new id and
// returns it as stored.
func (s *Store) CreateOrganization(ctx context.Context, o Organization, now time.Time) (Organization, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Organization{}, err
	}
	o.ID = NewID()
	if o.KIDAlgorithm == "" {
		o.KIDAlgorithm = billing.KIDMod10
	}
	o.CreatedAt = now.UTC().Truncate(time.Microsecond)
	o.UpdatedAt = o.CreatedAt
	_, err = s.w.ExecContext(ctx, `INSERT INTO organizations (tenant_id, `+organizationColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
		tenant, o.ID, o.Name, o.OrganizationNumber, o.Country, o.Currency, o.TimeZone,
		o.PricesIncludeVAT, o.LogoURL, o.KIDAlgorithm, o.Address.Line1, o.Address.Line2, o.Address.PostalCode,
		o.Address.City, o.Address.Country, o.BankAccount.AccountNumber, o.BankAccount.IBAN, o.BankAccount.BIC,
		o.VATRegistered, o.BusinessRegister, ts(o.CreatedAt), ts(o.UpdatedAt))
	if err != nil {
		return Organization{}, fmt.Errorf("store: create organization: %w", err)
	}
	return o, nil
}

// Organization returns the organization id of the context's tenant, or
// ErrNotFound (also for another tenant's organization).
func (s *Store) Organization(ctx context.Context, id string) (Organization, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Organization{}, err
	}
	if !ValidID(id) {
		return Organization{}, ErrNotFound
	}
	o, err := scanOrganization(s.readRow(ctx,
		`SELECT `+organizationColumns+` FROM organizations WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Organization{}, fmt.Errorf("store: organization %s: %w", id, notFound(err))
	}
	return o, nil
}

// OrganizationFilter narrows ListOrganizations; zero fields do not filter.
type OrganizationFilter struct {
	Country  string
	Currency string
}

// ListOrganizations returns one page of the tenant's organizations and the
// cursor of the next page ("" on the last).
func (s *Store) ListOrganizations(ctx context.Context, f OrganizationFilter, p Page) ([]Organization, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.Country != "" {
		q.add("country = ?", f.Country)
	}
	if f.Currency != "" {
		q.add("currency = ?", f.Currency)
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanOrganization, `SELECT `+organizationColumns+` FROM organizations`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list organizations: %w", err)
	}
	out, next := trimPage(out, p, func(o Organization) string { return o.ID })
	return out, next, nil
}

// UpdateOrganization replaces the editable fields of organization o.ID and
// returns the stored result, or ErrNotFound.
func (s *Store) UpdateOrganization(ctx context.Context, o Organization, now time.Time) (Organization, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Organization{}, err
	}
	if !ValidID(o.ID) {
		return Organization{}, ErrNotFound
	}
	if o.KIDAlgorithm == "" {
		o.KIDAlgorithm = billing.KIDMod10
	}
	updated, err := scanOrganization(s.w.QueryRowContext(ctx, `UPDATE organizations SET
		name = $3, organization_number = $4, country = $5, currency = $6, time_zone = $7,
		prices_include_vat = $8, logo_url = $9, kid_algorithm = $10, address_line1 = $11, address_line2 = $12,
		address_postal_code = $13, address_city = $14, address_country = $15, bank_account_number = $16, iban = $17,
		bic = $18, vat_registered = $19, business_register = $20, updated_at = $21
		WHERE tenant_id = $1 AND id = $2 RETURNING `+organizationColumns,
		tenant, o.ID, o.Name, o.OrganizationNumber, o.Country, o.Currency, o.TimeZone,
		o.PricesIncludeVAT, o.LogoURL, o.KIDAlgorithm, o.Address.Line1, o.Address.Line2, o.Address.PostalCode,
		o.Address.City, o.Address.Country, o.BankAccount.AccountNumber, o.BankAccount.IBAN, o.BankAccount.BIC,
		o.VATRegistered, o.BusinessRegister, ts(now)))
	if err != nil {
		return Organization{}, fmt.Errorf("store: update organization %s: %w", o.ID, notFound(err))
	}
	return updated, nil
}

// ErrOrganizationHasHistory: subscriptions or orders refer to the
// organization, so it is kept as billing history.
var ErrOrganizationHasHistory = fmt.Errorf("organization has subscriptions or orders: %w", ErrConflict)

// DeleteOrganization removes organization id, or returns ErrNotFound, or
// ErrOrganizationHasHistory when subscriptions or orders refer to it.
func (s *Store) DeleteOrganization(ctx context.Context, id string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(id) {
		return ErrNotFound
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM organizations WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: delete organization %s: %w", id, ErrOrganizationHasHistory)
	}
	if err != nil {
		return fmt.Errorf("store: delete organization %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: delete organization %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("store: organization %s: %w", id, ErrNotFound)
	}
	return nil
}
