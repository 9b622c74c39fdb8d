package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/store"
)

// catalogCache keeps the catalog reads of one Advance: renewals onto the
// same plan change target read the template once, not once per
// subscription, and a batch's chain instances are read together. The
// catalog does not change during an advance in any way that matters to
// it: a subscription keeps its own copy of its package, and a chain
// instance never changes once written.
type catalogCache struct {
	store     *store.Store
	templates map[string]catalog.MergeInput
	chains    map[string]catalog.Chain
	// instances holds the chain instances read or written; missing marks
	// ids that name no instance (the chain definitions of periods written
	// before instances existed).
	instances map[string]catalog.ChainInstance
	missing   map[string]bool
}

func newCatalogCache(s *store.Store) *catalogCache {
	return &catalogCache{store: s, templates: map[string]catalog.MergeInput{}, chains: map[string]catalog.Chain{},
		instances: map[string]catalog.ChainInstance{}, missing: map[string]bool{}}
}

// forgetInstances drops the chain instances read so far.
func (c *catalogCache) forgetInstances() {
	clear(c.instances)
	clear(c.missing)
}

// input returns the merge input of template id (without choices).
func (c *catalogCache) input(ctx context.Context, id string) (catalog.MergeInput, error) {
	in, ok := c.templates[id]
	if !ok {
		var err error
		if in, err = catalogdb.PackageForMerge(ctx, c.store, id); err != nil {
			return catalog.MergeInput{}, fmt.Errorf("engine: template package %s: %w", id, err)
		}
		c.templates[id] = in
	}
	return in, nil
}

// merge builds the subscription package of template id with choices.
func (c *catalogCache) merge(ctx context.Context, id string, choices catalog.Choices, allowArchived bool) (catalog.SubscriptionPackage, error) {
	in, err := c.input(ctx, id)
	if err != nil {
		return catalog.SubscriptionPackage{}, err
	}
	in.Choices = choices
	in.AllowArchived = allowArchived
	return catalog.Merge(in)
}

func (c *catalogCache) chain(ctx context.Context, id string) (catalog.Chain, error) {
	if ch, ok := c.chains[id]; ok {
		return ch, nil
	}
	ch, err := catalogdb.PackageChain(ctx, c.store, id)
	if err != nil {
		return catalog.Chain{}, fmt.Errorf("engine: package chain %s: %w", id, err)
	}
	ch.SortSteps()
	c.chains[id] = ch
	return ch, nil
}

// instanceReader reads the chain instances among ids, by id (an id that
// names none is left out): in the engine's transaction (txInstances), or
// on the read pool for a preview (Engine.poolInstances).
type instanceReader func(ctx context.Context, ids []string) (map[string]catalog.ChainInstance, error)

// txInstances reads chain instances in tx, a chunk of ids per query.
func txInstances(tx *store.Tx) instanceReader {
	return func(ctx context.Context, ids []string) (map[string]catalog.ChainInstance, error) {
		return catalogdb.ChainInstances(ctx, tx, ids)
	}
}

// poolInstances reads chain instances one by one on the read pool: a
// preview reads at most one.
func (e *Engine) poolInstances(ctx context.Context, ids []string) (map[string]catalog.ChainInstance, error) {
	out := map[string]catalog.ChainInstance{}
	for _, id := range ids {
		inst, err := catalogdb.ChainInstance(ctx, e.store, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = inst
	}
	return out, nil
}

// loadInstances reads the chain instances among ids not read yet, with
// read (one query in a transaction).
func (c *catalogCache) loadInstances(ctx context.Context, read instanceReader, ids []string) error {
	var want []string
	for _, id := range ids {
		if _, ok := c.instances[id]; !ok && !c.missing[id] {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	got, err := read(ctx, want)
	if err != nil {
		return err
	}
	for _, id := range want {
		if inst, ok := got[id]; ok {
			c.instances[id] = inst
		} else {
			c.missing[id] = true
		}
	}
	return nil
}

// freeze freezes chain for a subscription with choices, without writing
// it: startStep is the ordered template's step (merged strictly), or 0
// when an existing subscription's chain is frozen.
func (c *catalogCache) freeze(ctx context.Context, chain catalog.Chain, startStep int, choices catalog.Choices, at time.Time) (catalog.ChainInstance, error) {
	inputs := make(map[string]catalog.MergeInput, len(chain.PackageChain.Steps))
	for _, s := range chain.PackageChain.Steps {
		in, err := c.input(ctx, s.NextPackageID)
		if err != nil {
			return catalog.ChainInstance{}, err
		}
		inputs[s.NextPackageID] = in
	}
	return catalog.Instantiate(store.NewID(), chain, inputs, startStep, choices, at)
}

// write stores a frozen instance in tx and keeps it for the advance.
func (c *catalogCache) write(ctx context.Context, tx *store.Tx, inst catalog.ChainInstance) error {
	if err := catalogdb.InsertChainInstance(ctx, tx, inst); err != nil {
		return err
	}
	c.instances[inst.ID] = inst
	return nil
}

// instancePackage is the package a new series on template templateID with
// choices begins with (an order's first period, the target of a plan
// change): the merge of the template, and for a chained template the
// first package of a chain instance it writes in tx, frozen at, which
// names the instance and the ordered template's step. Invalid choices are
// validation.Errors, as from catalog.Merge.
func (e *Engine) instancePackage(ctx context.Context, tx *store.Tx, cache *catalogCache, templateID string, choices catalog.Choices, at time.Time) (catalog.SubscriptionPackage, error) {
	pkg, inst, err := e.frozenPackage(ctx, cache, templateID, choices, at)
	if err != nil || inst == nil {
		return pkg, err
	}
	if err := cache.write(ctx, tx, *inst); err != nil {
		return catalog.SubscriptionPackage{}, err
	}
	return pkg, nil
}

// frozenPackage is instancePackage without the write: the package, and
// for a chained template the chain instance (not written) it belongs to.
func (e *Engine) frozenPackage(ctx context.Context, cache *catalogCache, templateID string, choices catalog.Choices, at time.Time) (catalog.SubscriptionPackage, *catalog.ChainInstance, error) {
	pkg, err := cache.merge(ctx, templateID, choices, false)
	if err != nil || pkg.SubscriptionPackageChainID == nil {
		return pkg, nil, err
	}
	chain, err := cache.chain(ctx, *pkg.SubscriptionPackageChainID)
	if err != nil {
		return catalog.SubscriptionPackage{}, nil, err
	}
	inst, err := cache.freeze(ctx, chain, *pkg.ChainStepOrder, choices, at)
	if err != nil {
		return catalog.SubscriptionPackage{}, nil, err
	}
	step, _ := inst.Step(*pkg.ChainStepOrder)
	return step.Package, &inst, nil
}

// InstancePackage is instancePackage for callers outside an Advance (an
// order's completion): see there.
func (e *Engine) InstancePackage(ctx context.Context, tx *store.Tx, templateID string, choices catalog.Choices, at time.Time) (catalog.SubscriptionPackage, error) {
	return e.instancePackage(ctx, tx, newCatalogCache(e.store), templateID, choices, at)
}

// nextChainStep returns the package, choices and instance of the step
// after sub's, when sub's step has lasted its periods. ok is false when
// sub stays where it is: on its last step, or on a chain that no longer
// exists at all. A period written before chain instances existed names a
// chain definition: its chain is frozen now, from the definition as it
// is, with the period's choices, and the series follows that instance
// from here on; that instance is returned as frozen, for the caller to
// write (nil when the series already has its instance).
func (e *Engine) nextChainStep(ctx context.Context, read instanceReader, cache *catalogCache, sub store.Subscription, at time.Time) (step catalog.InstanceStep, instanceID string, frozen *catalog.ChainInstance, ok bool, err error) {
	id := *sub.ChainID
	if err := cache.loadInstances(ctx, read, []string{id}); err != nil {
		return catalog.InstanceStep{}, "", nil, false, err
	}
	inst, found := cache.instances[id]
	if !found {
		chain, err := cache.chain(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return catalog.InstanceStep{}, "", nil, false, nil
		}
		if err != nil {
			return catalog.InstanceStep{}, "", nil, false, err
		}
		if inst, err = cache.freeze(ctx, chain, 0, sub.Choices, at); err != nil {
			return catalog.InstanceStep{}, "", nil, false, err
		}
		frozen = &inst
	}
	step, ok = inst.Step(*sub.ChainStep + 1)
	return step, inst.ID, frozen, ok, nil
}

// chainIDsDue returns the chain ids of subs whose renewal moves them to
// their chain's next step, for the batch to read their instances at once.
func chainIDsDue(subs []store.Subscription) []string {
	var ids []string
	for _, sub := range subs {
		if stepEnds(sub) {
			ids = append(ids, *sub.ChainID)
		}
	}
	return ids
}

// stepEnds reports whether sub is the last period of a chain step that
// has a next step. The package says how long its step lasts
// (ChainStepPeriods, nil on the last step), so a renewal within a step
// needs no read at all.
func stepEnds(sub store.Subscription) bool {
	p := sub.Package.ChainStepPeriods
	return sub.ChainID != nil && sub.ChainStep != nil && p != nil && sub.StepPeriod >= *p
}
