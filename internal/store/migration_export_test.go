package store

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// RedoMigration exposes migrations to the external tests: it reverts
// migration version alone, runs between on the schema as it was before
// that migration, and applies it again, so a test can check what the
// migration does to rows that existed before it.
func (s *Store) RedoMigration(ctx context.Context, version int64, between func() error) error {
	dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
	if s.engine == Postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, s.w, sub)
	if err != nil {
		return err
	}
	if _, err := p.ApplyVersion(ctx, version, false); err != nil {
		return fmt.Errorf("revert %d: %w", version, err)
	}
	if err := between(); err != nil {
		return err
	}
	if _, err := p.ApplyVersion(ctx, version, true); err != nil {
		return fmt.Errorf("apply %d: %w", version, err)
	}
	return nil
}
