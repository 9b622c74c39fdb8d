package store

import (
	"context"
	"fmt"
)

// The newest stored claim file of an AvtaleGiro account: what
// `kadens avtalegiro fetch --latest` writes again when the export's own
// output was lost (the command was killed after the items were marked
// sent). Ids are UUIDv7, so the greatest id is the file stored last.

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
