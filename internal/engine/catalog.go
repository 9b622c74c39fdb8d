package engine

import (
	"context"
	"fmt"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// catalogCache keeps the catalog reads of one Advance: renewals onto the
// same chain step or plan change target read the template once, not once
// per subscription. The catalog does not change during an advance in any
// way that matters to it: a subscription keeps its own copy of its package.
type catalogCache struct {
	store     *store.Store
	templates map[string]catalog.MergeInput
	chains    map[string]catalog.Chain
}

func newCatalogCache(s *store.Store) *catalogCache {
	return &catalogCache{store: s, templates: map[string]catalog.MergeInput{}, chains: map[string]catalog.Chain{}}
}

// merge builds the subscription package of template id with choices.
func (c *catalogCache) merge(ctx context.Context, id string, choices catalog.Choices, allowArchived bool) (catalog.SubscriptionPackage, error) {
	in, ok := c.templates[id]
	if !ok {
		var err error
		if in, err = c.store.PackageForMerge(ctx, id); err != nil {
			return catalog.SubscriptionPackage{}, fmt.Errorf("engine: template package %s: %w", id, err)
		}
		c.templates[id] = in
	}
	in.Choices = choices
	in.AllowArchived = allowArchived
	return catalog.Merge(in)
}

func (c *catalogCache) chain(ctx context.Context, id string) (catalog.Chain, error) {
	if ch, ok := c.chains[id]; ok {
		return ch, nil
	}
	ch, err := c.store.PackageChain(ctx, id)
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("engine: package chain %s: %w", id, err)
	}
	ch.SortSteps()
	c.chains[id] = ch
	return ch, nil
}
