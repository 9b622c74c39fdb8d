package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations
var migrations embed.FS

// Migrate applies every pending migration of the store's engine. On
// PostgreSQL an advisory lock makes concurrent starters (several `kadens
// serve` processes) apply each migration exactly once.
func (s *Store) Migrate(ctx context.Context, log *slog.Logger) error {
	var (
		dialect goose.Dialect
		dir     string
		opts    []goose.ProviderOption
	)
	switch s.engine {
	case Postgres:
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		dialect, dir = goose.DialectSQLite3, "migrations/sqlite"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	p, err := goose.NewProvider(dialect, s.w, sub, opts...)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate %s: %w", s.engine, err)
	}
	// One line per migration is detail (a new database gets them all);
	// the summary is what an operator reads.
	var took time.Duration
	for _, r := range results {
		log.Debug("migration applied", "engine", s.engine, "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
		took += r.Duration
	}
	if len(results) > 0 {
		log.Info("migrations applied", "engine", s.engine, "count", len(results),
			"version", results[len(results)-1].Source.Version, "duration", took)
	}
	return nil
}
