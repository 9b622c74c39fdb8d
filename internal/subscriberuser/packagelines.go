package subscriberuser

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// PackageLine is what a subscriber user's access needs of a stored
// package's product (the identity wing's entitlements and authorization
// events).
type PackageLine struct{ ProductID, Name, Category string }

// packageProductsCache maps a stored package (by hash, a function of its
// text alone, so shared between tenants without showing anyone anything)
// to its products: included and additional. Packages are never changed
// under a hash, so entries never go stale; the map is emptied when it
// reaches packageLinesMax entries.
var packageProductsCache = struct {
	sync.RWMutex
	m map[string][]PackageLine
}{m: map[string][]PackageLine{}}

// packageLinesMax bounds the cache: far more distinct packages than a
// tenant's catalog makes, so a busy process keeps them all.
const packageLinesMax = 2048

// packageLines returns the products of the packages stored as hashes,
// reading those the cache lacks in one query. Subscription packages are
// the store's records; what access makes of them is the identity wing's,
// so the read and its cache are here.
func packageLines(ctx context.Context, st *store.Store, tenant string, hashes []string) (map[string][]PackageLine, error) {
	out := make(map[string][]PackageLine, len(hashes))
	var missing []string
	packageProductsCache.RLock()
	for _, h := range hashes {
		if v, ok := packageProductsCache.m[h]; ok {
			out[h] = v
		} else if !slices.Contains(missing, h) {
			missing = append(missing, h)
		}
	}
	packageProductsCache.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	in, args := store.InList(missing, 2)
	rows, err := st.Reader().Query(ctx, `SELECT hash, package FROM subscription_packages WHERE tenant_id = $1 AND hash IN `+in,
		append([]any{tenant}, args...)...)
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
	if len(packageProductsCache.m)+len(fresh) > packageLinesMax {
		clear(packageProductsCache.m)
	}
	for h, v := range fresh {
		packageProductsCache.m[h] = v
	}
	packageProductsCache.Unlock()
	return out, nil
}

// cachedPackageLines returns the products of the package stored as hash
// if the cache has them: the entitlement read's path for nearly every
// request, which allocates nothing (packageLines builds a map).
func cachedPackageLines(hash string) ([]PackageLine, bool) {
	packageProductsCache.RLock()
	v, ok := packageProductsCache.m[hash]
	packageProductsCache.RUnlock()
	return v, ok
}
