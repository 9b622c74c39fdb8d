// Package app is Kadens' application layer: the typed commands and queries
// that every surface calls — the HTTP API today, the merchant console and
// Min side tomorrow. A command validates its input against the tenant's
// data, applies the rules (what makes an order, a payment, a credit or a
// cancellation valid) and writes through the engine, invoicing or the
// store; it answers with the record it made or a typed error:
//
//   - validation.Errors: the input is wrong (a surface shows it per field;
//     the API answers 400);
//   - store.ErrNotFound: the thing named does not exist in this tenant (404);
//   - anything else: the service failed (500), wrapped with what it did.
//
// A surface decodes its own input (JSON, a form) into a command, calls
// one function here and renders the answer; it never writes to the store
// itself. Every command runs in the tenant the context carries
// (tenancy.With) and at the tenant's own time (Now).
package app

import (
	"time"

	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
)

// App is the application layer of one process. It is safe for concurrent
// use; a process builds one and hands it to every surface.
type App struct {
	store     *store.Store
	engine    *engine.Engine
	providers *provider.Registry
	wall      func() time.Time
	tenants   *tenantCache
}

// Options are what the application layer runs on.
type Options struct {
	Store  *store.Store
	Engine *engine.Engine
	// Providers check and run payment agreements by provider type.
	Providers *provider.Registry
	// Now is the wall clock (time.Now when nil); tests pin it.
	Now func() time.Time
}

// New builds the application layer.
func New(o Options) *App {
	wall := o.Now
	if wall == nil {
		wall = time.Now
	}
	return &App{
		store: o.Store, engine: o.Engine, providers: o.Providers,
		wall:    func() time.Time { return wall().UTC() },
		tenants: newTenantCache(o.Store),
	}
}
