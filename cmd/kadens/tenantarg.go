package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The operator commands that act for one tenant (autogiro, avtalegiro)
// share how they name it and how they take a FILE argument.

// tenantContext resolves --tenant (a name or an id) into a context.
func tenantContext(ctx context.Context, st *store.Store, nameOrID string) (context.Context, error) {
	if nameOrID == "" {
		return nil, usagef("--tenant is required")
	}
	t, err := commandTenant(ctx, st, nameOrID)
	if err != nil {
		return nil, err
	}
	return tenancy.With(ctx, t.ID), nil
}

// openTenant opens the store named by cfg (openStore) and finds the
// tenant --tenant names in it: the start of every command that acts for
// one tenant by its id. The store is the caller's to close; on an error
// it is closed already.
func openTenant(ctx context.Context, cfg *config.Config, stderr io.Writer, nameOrID string) (*store.Store, store.Tenant, error) {
	st, err := openStore(ctx, cfg, stderr)
	if err != nil {
		return nil, store.Tenant{}, err
	}
	t, err := commandTenant(ctx, st, nameOrID)
	if err != nil {
		st.Close()
		return nil, store.Tenant{}, err
	}
	return st, t, nil
}

// commandTenant finds a tenant by id or name.
func commandTenant(ctx context.Context, st *store.Store, nameOrID string) (store.Tenant, error) {
	t, err := st.TenantByID(ctx, nameOrID)
	if errors.Is(err, store.ErrNotFound) {
		t, err = st.TenantByName(ctx, nameOrID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Tenant{}, fmt.Errorf("no tenant %q", nameOrID)
	}
	return t, err
}

// tenantTime is the tenant's time (store.Tenant.Now).
func tenantTime(ctx context.Context, st *store.Store) (time.Time, error) {
	id, err := tenancy.From(ctx)
	if err != nil {
		return time.Time{}, err
	}
	t, err := st.TenantByID(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	return t.Now(time.Now()), nil
}

// tenantAt is tenantContext and tenantTime in one call.
func tenantAt(ctx context.Context, st *store.Store, nameOrID string) (context.Context, time.Time, error) {
	tctx, err := tenantContext(ctx, st, nameOrID)
	if err != nil {
		return nil, time.Time{}, err
	}
	now, err := tenantTime(tctx, st)
	return tctx, now, err
}

// parseWithFile parses flags that may come before or after one FILE
// argument and returns the file.
func parseWithFile(fs *flag.FlagSet, args []string) (string, error) {
	file := ""
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", err
			}
			return "", usageError{err}
		}
		if fs.NArg() == 0 {
			break
		}
		if file != "" {
			return "", usagef("unexpected arguments: %v", fs.Args())
		}
		file, args = fs.Arg(0), fs.Args()[1:]
	}
	if file == "" {
		return "", usagef("the file to import is required")
	}
	return file, nil
}
