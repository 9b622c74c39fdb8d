package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/kadens/kadens/internal/catalog"
)

// PackageLine is what a subscriber user's access needs of a stored
// package's product (the identity wing's entitlements and authorization
// events).
type PackageLine struct{ ProductID, Name, Category string }

// packageProductsCache maps a stored package (by hash, a function of its
// text alone, so shared between tenants without showing anyone anything)
// to its products: included and additional. Packages are never changed
// under a hash, so entries never go stale; the map is emptied when it
// reaches packageViewsMax entries.
var packageProductsCache = struct {
	sync.RWMutex
	m map[string][]PackageLine
}{m: map[string][]PackageLine{}}

// PackageLines returns the products of the packages stored as hashes,
// reading those the cache lacks in one query. It is in the query kit
// because subscription packages are the store's records and their cache
// is shared with the listings, while what access makes of them is the
// identity wing's.
func (s *Store) PackageLines(ctx context.Context, tenant string, hashes []string) (map[string][]PackageLine, error) {
	out := make(map[string][]PackageLine, len(hashes))
	var missing []any
	packageProductsCache.RLock()
	for _, h := range hashes {
		if v, ok := packageProductsCache.m[h]; ok {
			out[h] = v
		} else if !slices.Contains(missing, any(h)) {
			missing = append(missing, h)
		}
	}
	packageProductsCache.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT hash, package FROM subscription_packages WHERE tenant_id = $1 AND hash IN (`+
		placeholders(2, len(missing))+`)`, append([]any{tenant}, missing...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fresh := map[string][]PackageLine{}
	for rows.Next() {
		var (
			hash string
			raw  []byte
			p    struct {
				Products           []catalog.Line `json:"products"`
				AdditionalProducts []catalog.Line `json:"additionalProducts"`
			}
		)
		if err := rows.Scan(&hash, &raw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("package %s: %w", hash, err)
		}
		lines := make([]PackageLine, 0, len(p.Products)+len(p.AdditionalProducts))
		for _, l := range append(p.Products, p.AdditionalProducts...) {
			lines = append(lines, PackageLine{l.ProductID, l.Name, l.Category})
		}
		fresh[hash], out[hash] = lines, lines
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	packageProductsCache.Lock()
	if len(packageProductsCache.m)+len(fresh) > packageViewsMax {
		clear(packageProductsCache.m)
	}
	for h, v := range fresh {
		packageProductsCache.m[h] = v
	}
	packageProductsCache.Unlock()
	return out, nil
}

// CachedPackageLines returns the products of the package stored as hash
// if the cache has them: the entitlement read's path for nearly every
// request, which allocates nothing (PackageLines builds a map).
func CachedPackageLines(hash string) ([]PackageLine, bool) {
	packageProductsCache.RLock()
	v, ok := packageProductsCache.m[hash]
	packageProductsCache.RUnlock()
	return v, ok
}

// SubscriptionNotOverAt3 is true for a subscription period s that grants
// access at $3 or will later: not ended, no cancellation or deactivation
// in effect. Of those, the started ones (period_start <= $3, decided by
// the caller) grant it now; the others' starts are when the answer
// changes next. It is the store's SQL for a subscription's status as
// access reads it, exported for the identity wing's entitlement read and
// authorization events.
const SubscriptionNotOverAt3 = ` s.period_end > $3
		AND (s.cancel_effective_at IS NULL OR s.cancel_effective_at > $3)
		AND (s.deactivated_at IS NULL OR s.deactivated_at > $3)`
