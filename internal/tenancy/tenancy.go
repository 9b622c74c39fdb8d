// Package tenancy carries the current tenant through a request's context.
//
// The tenant is established once, by the API's authentication middleware, and
// every tenant-owned query reads it from the context. Callers therefore cannot
// forget to scope a query: a store method called without a tenant fails.
package tenancy

import (
	"context"
	"errors"
)

type ctxKey struct{}

// ErrNoTenant is returned when tenant-owned data is touched without a tenant
// in the context. It always indicates a programming error, never bad input.
var ErrNoTenant = errors.New("tenancy: no tenant in context")

// With returns a context carrying tenant id.
func With(ctx context.Context, tenantID string) context.Context {
	return context.WithValue(ctx, ctxKey{}, tenantID)
}

// From returns the tenant id carried by ctx.
func From(ctx context.Context) (string, error) {
	id, ok := ctx.Value(ctxKey{}).(string)
	if !ok || id == "" {
		return "", ErrNoTenant
	}
	return id, nil
}
