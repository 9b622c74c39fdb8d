package subscriberuser

import "github.com/kadens/kadens/internal/password"

// The hasher moved to internal/password, a base the console's staff users
// (internal/staff, another wing) share; these names keep the directory's
// callers and the documents that cite them working.

// Params are the argon2id cost parameters (password.Params).
type Params = password.Params

// ErrMalformedHash is password.ErrMalformedHash.
var ErrMalformedHash = password.ErrMalformedHash

// Hash is password.Hash.
func Hash(pw string, p Params) (string, error) { return password.Hash(pw, p) }

// Verify is password.Verify.
func Verify(encoded, pw string) (bool, error) { return password.Verify(encoded, pw) }

// NeedsRehash is password.NeedsRehash.
func NeedsRehash(encoded string, p Params) bool { return password.NeedsRehash(encoded, p) }
