package store

import (
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"fmt"

	"modernc.org/sqlite"
)

// kadens_sha256(text) is packageHash in SQL on SQLite (PostgreSQL has
// sha256 built in), for migration 00020, which keys the stored packages of
// existing periods by it.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("kadens_sha256", 1,
		func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			switch v := args[0].(type) {
			case string:
				return packageHash(v), nil
			case []byte:
				return packageHash(string(v)), nil
			}
			return nil, fmt.Errorf("kadens_sha256: cannot hash %T", args[0])
		})
}

// packageHash is the key of a package's JSON text in subscription_packages:
// the lowercase hex SHA-256 of the text.
func packageHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
