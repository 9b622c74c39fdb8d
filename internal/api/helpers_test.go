package api_test

import (
	"context"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/idp"
)

// idpNewClient creates another machine client of the env's default tenant.
func idpNewClient(e *apitest.Env) (string, string, error) {
	return idp.NewClientCredentials(context.Background(), e.Store, e.Tenant.ID, "second client", time.Now())
}
