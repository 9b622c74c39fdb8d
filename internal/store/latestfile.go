package store

import (
	"context"
	"fmt"

	"github.com/kadens/kadens/internal/tenancy"
)

// The newest stored export file of an organization (Autogiro) or an
// account (AvtaleGiro): what `kadens autogiro fetch --latest` and
// `kadens avtalegiro fetch --latest` write again when the export's own
// output was lost (the command was killed after the items were marked
// sent). Ids are UUIDv7, so the greatest id is the file stored last.

// LatestAutogiroExportFile returns the newest submission file of the
// context's tenant's organization, or ErrNotFound.
func (s *Store) LatestAutogiroExportFile(ctx context.Context, organizationID string) (AutogiroExportFile, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AutogiroExportFile{}, err
	}
	if !ValidID(organizationID) {
		return AutogiroExportFile{}, ErrNotFound
	}
	var id string
	if err := s.r.QueryRowContext(ctx, `SELECT id FROM autogiro_export_files WHERE tenant_id = $1 AND organization_id = $2
		ORDER BY id DESC LIMIT 1`, tenant, organizationID).Scan(&id); err != nil {
		return AutogiroExportFile{}, fmt.Errorf("store: latest autogiro export file of organization %s: %w", organizationID, notFound(err))
	}
	return s.AutogiroExportFile(ctx, id)
}

// LatestAvtaleGiroClaimFile returns the newest claim file written for the
// context's tenant's account, or ErrNotFound.
func (s *Store) LatestAvtaleGiroClaimFile(ctx context.Context, accountID string) (AvtaleGiroFile, error) {
	tenant, err := avgTenant(ctx)
	if err != nil {
		return AvtaleGiroFile{}, err
	}
	if !ValidID(accountID) {
		return AvtaleGiroFile{}, ErrNotFound
	}
	f, err := scanAvgFile(s.r.QueryRowContext(ctx, `SELECT `+avgFileColumns+` FROM avtalegiro_files
		WHERE tenant_id = $1 AND account_id = $2 AND direction = 'Out' ORDER BY id DESC LIMIT 1`, tenant, accountID))
	if err != nil {
		return AvtaleGiroFile{}, fmt.Errorf("store: latest avtalegiro claim file of account %s: %w", accountID, notFound(err))
	}
	return f, nil
}
