package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// PublicURLs are the public addresses of a running server's surfaces.
// `kadens serve` records them when it starts listening, so that operator
// commands run beside it (which do not know its settings) print addresses
// that work, e.g. the token URL of a new client.
type PublicURLs struct {
	Base, IdP, Analytics string
	// RecordedAt is when the server recorded them.
	RecordedAt time.Time
}

const (
	settingBaseURL      = "public.base_url"
	settingIdPURL       = "public.idp_url"
	settingAnalyticsURL = "public.analytics_url"
)

// SetPublicURLs records u (replacing what an earlier start recorded).
func (s *Store) SetPublicURLs(ctx context.Context, u PublicURLs) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, kv := range [][2]string{{settingBaseURL, u.Base}, {settingIdPURL, u.IdP}, {settingAnalyticsURL, u.Analytics}} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3)
				ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
				kv[0], kv[1], ts(u.RecordedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record public URLs: %w", err)
	}
	return nil
}

// PublicURLs returns the URLs the last started server recorded, or
// ErrNotFound when no server has started on this database yet.
func (s *Store) PublicURLs(ctx context.Context) (PublicURLs, error) {
	var u PublicURLs
	rows, err := s.r.QueryContext(ctx, `SELECT name, value, updated_at FROM settings WHERE name IN ($1, $2, $3)`,
		settingBaseURL, settingIdPURL, settingAnalyticsURL)
	if err != nil {
		return u, fmt.Errorf("store: public URLs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name, value string
			at          time.Time
		)
		if err := rows.Scan(&name, &value, &at); err != nil {
			return u, fmt.Errorf("store: public URLs: %w", err)
		}
		switch name {
		case settingBaseURL:
			u.Base = value
		case settingIdPURL:
			u.IdP = value
		case settingAnalyticsURL:
			u.Analytics = value
		}
		u.RecordedAt = at.UTC()
	}
	if err := rows.Err(); err != nil {
		return u, fmt.Errorf("store: public URLs: %w", err)
	}
	if u.IdP == "" {
		return u, fmt.Errorf("store: public URLs: %w", ErrNotFound)
	}
	return u, nil
}
