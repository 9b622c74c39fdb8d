package server

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/minside"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
)

// MinSideClientName is the name of the login client Min side registers
// per tenant on first use (docs/MINSIDE.md, "The login client").
const MinSideClientName = "Min side"

// newMinSide builds Min side (internal/minside) over the process's
// application layer. Its keys come from the master key by HKDF-SHA256,
// each under its own label: the session cookie's two, and per tenant the
// secret of the tenant's Min side login client, which therefore needs no
// place to be kept and is the same in every process and after a restart.
func newMinSide(cfg *config.Config, st *store.Store, application *app.App, master []byte, log *slog.Logger) (*minside.MinSide, error) {
	derive := func(label string) ([]byte, error) {
		return hkdf.Key(sha256.New, master, nil, "kadens minside "+label, 32)
	}
	hashKey, err := derive("cookie authentication")
	if err != nil {
		return nil, err
	}
	blockKey, err := derive("cookie encryption")
	if err != nil {
		return nil, err
	}
	var (
		mu      sync.Mutex
		clients = map[string]minside.Client{}
	)
	client := func(ctx context.Context, tenantID string) (minside.Client, error) {
		mu.Lock()
		c, ok := clients[tenantID]
		mu.Unlock()
		if ok {
			return c, nil
		}
		key, err := derive("login client " + tenantID)
		if err != nil {
			return minside.Client{}, err
		}
		secret := base64.RawURLEncoding.EncodeToString(key)
		lc, err := idp.EnsureLoginClient(ctx, st, tenantID, idp.LoginClientSpec{Name: MinSideClientName,
			RedirectURIs: []string{minside.RedirectURI(cfg.BaseURL)}, PostLogoutRedirectURIs: []string{minside.LogoutURI(cfg.BaseURL)}},
			secret, time.Now())
		if err != nil {
			return minside.Client{}, err
		}
		c = minside.Client{ID: lc.ID, Secret: secret}
		mu.Lock()
		clients[tenantID] = c
		mu.Unlock()
		return c, nil
	}
	user := func(ctx context.Context, tenantID, userID string) (string, bool, error) {
		u, err := subscriberuser.UserByID(tenancy.With(ctx, tenantID), st, userID)
		if errors.Is(err, store.ErrNotFound) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return u.SubscriberID, !u.Disabled, nil
	}
	return minside.New(minside.Options{App: application, Store: st, Log: log, BaseURL: cfg.BaseURL, Issuer: cfg.IdPURL,
		ClaimsNamespace: cfg.ClaimsNamespace, Client: client, User: user, HashKey: hashKey, BlockKey: blockKey})
}
