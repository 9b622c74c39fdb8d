package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/store"
)

// SubscriptionChain is the chain instance a subscription period follows.
type SubscriptionChain struct {
	Subscription store.Subscription
	Instance     catalog.ChainInstance
	// Frozen is false for a period ordered before chain instances
	// existed: Instance is then merged from the chain definition as it is
	// now, and the engine freezes it at the period's next step change.
	Frozen bool
}

// SubscriptionChain is the chain instance subscription period id follows:
// store.ErrNotFound if there is no such period or it follows no chain.
func (a *App) SubscriptionChain(ctx context.Context, id string) (SubscriptionChain, error) {
	sub, err := a.store.Subscription(ctx, id)
	if err != nil {
		return SubscriptionChain{}, err
	}
	if sub.ChainID == nil || sub.ChainStep == nil {
		return SubscriptionChain{}, store.ErrNotFound
	}
	frozen := true
	inst, err := catalogdb.ChainInstance(ctx, a.store, *sub.ChainID)
	if errors.Is(err, store.ErrNotFound) {
		frozen = false
		inst, err = a.definitionInstance(ctx, *sub.ChainID, sub.Choices)
	}
	if err != nil {
		return SubscriptionChain{}, err
	}
	return SubscriptionChain{Subscription: sub, Instance: inst, Frozen: frozen}, nil
}

// definitionInstance shows what the engine will freeze for a period that
// still names chain definition id (ordered before chain instances
// existed): the definition's steps merged as they are now. Nothing is
// written.
func (a *App) definitionInstance(ctx context.Context, id string, choices catalog.Choices) (catalog.ChainInstance, error) {
	chain, err := catalogdb.PackageChain(ctx, a.store, id)
	if err != nil {
		return catalog.ChainInstance{}, err
	}
	chain.SortSteps()
	inputs := map[string]catalog.MergeInput{}
	for _, st := range chain.PackageChain.Steps {
		if _, ok := inputs[st.NextPackageID]; ok {
			continue
		}
		in, err := catalogdb.PackageForMerge(ctx, a.store, st.NextPackageID)
		if err != nil {
			return catalog.ChainInstance{}, fmt.Errorf("chain %s step %d: %w", id, st.Step, err)
		}
		inputs[st.NextPackageID] = in
	}
	return catalog.Instantiate(chain.ID, chain, inputs, 0, choices, chain.UpdatedAt)
}
