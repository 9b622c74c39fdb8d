package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/store"
)

// openStore opens and migrates the store named by cfg, so operator commands
// work on a fresh database as well as beside a running server.
func openStore(ctx context.Context, cfg *config.Config, stderr io.Writer) (*store.Store, error) {
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return nil, err
	}
	opts := store.Options{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir}
	opts.Log, opts.LockWait = log, store.DefaultLockWait
	st, err := store.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx, log); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("migrate", stderr, getenv)
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "database %s is up to date\n", st.Source())
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func tenantCreate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("tenant create", stderr, getenv)
	name := fs.String("name", "", "tenant name (unique; also the subscriber login connection name)")
	test := fs.Bool("test", false, "make a test tenant, whose clock is advanced through the API")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	*name = strings.TrimSpace(*name)
	if *name == "" {
		return usagef("--name is required")
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := st.CreateTenant(ctx, *name, *test, time.Now())
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("a tenant named %q exists already; pick another --name", *name)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]string{"id": t.ID})
	}
	fmt.Fprintf(stdout, "created tenant %s (%s)\n", t.Name, t.ID)
	return nil
}

func clientCreate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("client create", stderr, getenv)
	tenant := fs.String("tenant", "", "tenant name or id")
	name := fs.String("name", "machine client", "a description of the client")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("--tenant is required")
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := st.TenantByID(ctx, *tenant)
	if errors.Is(err, store.ErrNotFound) {
		t, err = st.TenantByName(ctx, *tenant)
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no tenant %q; create one with `kadens tenant create --name %s`", *tenant, *tenant)
	}
	if err != nil {
		return err
	}
	id, secret, err := idp.NewClientCredentials(ctx, st, t.ID, *name, time.Now())
	if err != nil {
		return err
	}
	tokenURL, err := publicTokenURL(ctx, cfg, st, stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]string{"clientId": id, "clientSecret": secret, "tokenUrl": tokenURL})
	}
	fmt.Fprintf(stdout, "client id:     %s\nclient secret: %s (shown once; only a hash is stored)\ntoken url:     %s\n", id, secret, tokenURL)
	return nil
}

// publicTokenURL is the token URL clients use: from --idp-url or
// --base-url when given, else the one the server recorded when it started
// on this database, else (no server started yet) derived from the defaults,
// with a warning.
func publicTokenURL(ctx context.Context, cfg *config.Config, st *store.Store, stderr io.Writer) (string, error) {
	if cfg.Explicit("idp-url") || cfg.Explicit("base-url") {
		return cfg.IdPURL + "/oauth/token", nil
	}
	u, err := st.PublicURLs(ctx)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(stderr, "kadens: no server has started on this database yet, so the token url assumes its default address %s; "+
			"pass --idp-url (or --base-url) if the server will run elsewhere\n", cfg.IdPURL)
		return cfg.IdPURL + "/oauth/token", nil
	}
	if err != nil {
		return "", err
	}
	return u.IdP + "/oauth/token", nil
}

func keyRotate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("key rotate", stderr, getenv)
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	master, err := idp.MasterKey(cfg.MasterKey, cfg.DataDir)
	if err != nil {
		return err
	}
	keys := idp.NewKeys(st, master, cfg.TokenTTL, slog.New(slog.NewTextHandler(stderr, nil)))
	if err := keys.Load(ctx); err != nil {
		return err
	}
	kid, err := keys.Rotate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new signing key %s is active; running servers pick it up within a minute, and tokens signed by the old key stay valid until they expire\n", kid)
	return nil
}
