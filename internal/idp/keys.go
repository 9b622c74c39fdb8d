package idp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/atomicfile"
	"github.com/kadens/kadens/internal/store"
)

// SigningAlgorithm is the JWS algorithm of Kadens-issued tokens. ES256 keeps
// tokens short and verification cheap.
const SigningAlgorithm = jose.ES256

// Keys manages the token-signing keys. They live in the database (private
// halves encrypted under the master key) so that every process serving one
// database signs and verifies with the same set, and an in-memory copy
// serves signing and verification without touching the database per request.
type Keys struct {
	store    *store.Store
	master   []byte
	tokenTTL time.Duration
	log      *slog.Logger

	mu        sync.RWMutex
	signer    jose.Signer
	private   jose.JSONWebKey // the active key, for the OpenID provider's signer
	activeKID string
	public    map[string]jose.JSONWebKey
	published []jose.JSONWebKey
	loadedAt  time.Time
}

// NewKeys returns a key manager; call Load before use.
func NewKeys(s *store.Store, masterKey []byte, tokenTTL time.Duration, log *slog.Logger) *Keys {
	return &Keys{store: s, master: masterKey, tokenTTL: tokenTTL, log: log, public: map[string]jose.JSONWebKey{}}
}

// clockSkew is how far a verifier's clock may run behind the signer's: a
// retired key stays published this long after its last token's lifetime.
const clockSkew = 5 * time.Minute

// keptRetired is how long a rotation keeps a retired key in the database:
// the longest token lifetime the settings accept (--token-ttl, at most 24h
// in internal/config) and the skew. Not the rotating process's own
// lifetime: `kadens key rotate` run without the server's setting has the
// default hour, and would delete a key whose tokens a server with a longer
// lifetime still honours.
const keptRetired = 24*time.Hour + clockSkew

// Load reads the keys from the store, creating the first one if there is
// none, and publishes those whose tokens may still be valid.
func (k *Keys) Load(ctx context.Context) error {
	keys, err := storedKeys(ctx, k.store)
	if err != nil {
		return err
	}
	if !hasActive(keys) {
		if _, err := k.add(ctx, false); err != nil {
			return err
		}
		if keys, err = storedKeys(ctx, k.store); err != nil {
			return err
		}
	}
	return k.install(keys)
}

func hasActive(keys []StoredKey) bool {
	for _, sk := range keys {
		if sk.RetiredAt == nil {
			return true
		}
	}
	return false
}

// Rotate makes a new key the signing key. The previous key stays published
// until every token it signed has expired, so live tokens keep working.
// Keys retired longer ago than any token lives (keptRetired) are deleted,
// so the table holds the active key and the few that may still verify
// instead of one row per rotation forever.
func (k *Keys) Rotate(ctx context.Context) (string, error) {
	kid, err := k.add(ctx, true)
	if err != nil {
		return "", err
	}
	// The new key is active already: a failed clean-up is said, not
	// returned, or the operator would rotate again for nothing.
	if n, err := deleteKeysRetiredBefore(ctx, k.store, time.Now().Add(-keptRetired)); err != nil {
		k.log.Warn("delete expired signing keys", "err", err)
	} else if n > 0 {
		k.log.Info("expired signing keys deleted", "count", n)
	}
	return kid, k.Load(ctx)
}

func (k *Keys) add(ctx context.Context, retireOthers bool) (string, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("idp: generate signing key: %w", err)
	}
	kid := store.NewID()
	jwk := jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(SigningAlgorithm), Use: "sig"}
	privJSON, err := jwk.MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("idp: encode signing key: %w", err)
	}
	pubJSON, err := jwk.Public().MarshalJSON()
	if err != nil {
		return "", fmt.Errorf("idp: encode public key: %w", err)
	}
	enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: k.master}, nil)
	if err != nil {
		return "", fmt.Errorf("idp: key encrypter: %w", err)
	}
	jwe, err := enc.Encrypt(privJSON)
	if err != nil {
		return "", fmt.Errorf("idp: encrypt signing key: %w", err)
	}
	sealed, err := jwe.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("idp: encrypt signing key: %w", err)
	}
	added, err := addKey(ctx, k.store, StoredKey{
		ID: kid, Algorithm: string(SigningAlgorithm), PrivateJWE: sealed, PublicJWK: string(pubJSON),
		CreatedAt: time.Now().UTC(),
	}, retireOthers)
	if err != nil {
		return "", err
	}
	if !added && retireOthers {
		return "", errors.New("idp: another process rotated the signing key at the same moment; try again")
	}
	if added {
		k.log.Info("signing key created", "kid", kid, "rotation", retireOthers)
	}
	return kid, nil
}

// install replaces the in-memory key set with keys.
func (k *Keys) install(keys []StoredKey) error {
	now := time.Now()
	public := map[string]jose.JSONWebKey{}
	var (
		published []jose.JSONWebKey
		signer    jose.Signer
		private   jose.JSONWebKey
		activeKID string
	)
	for _, sk := range keys {
		// A retired key's tokens are all expired once a token lifetime (plus
		// clock skew) has passed since it stopped signing.
		if sk.RetiredAt != nil && now.Sub(*sk.RetiredAt) > k.tokenTTL+clockSkew {
			continue
		}
		var pub jose.JSONWebKey
		if err := pub.UnmarshalJSON([]byte(sk.PublicJWK)); err != nil {
			return fmt.Errorf("idp: signing key %s: bad public key: %w", sk.ID, err)
		}
		public[sk.ID] = pub
		published = append(published, pub)
		if sk.RetiredAt == nil && signer == nil {
			priv, err := k.open(sk)
			if err != nil {
				return err
			}
			signer, err = jose.NewSigner(jose.SigningKey{Algorithm: SigningAlgorithm, Key: priv},
				(&jose.SignerOptions{}).WithType("JWT"))
			if err != nil {
				return fmt.Errorf("idp: signer for key %s: %w", sk.ID, err)
			}
			activeKID, private = sk.ID, priv
		}
	}
	if signer == nil {
		return errors.New("idp: no active signing key")
	}
	k.mu.Lock()
	k.signer, k.private, k.activeKID, k.public, k.published, k.loadedAt = signer, private, activeKID, public, published, now
	k.mu.Unlock()
	return nil
}

// open decrypts the private half of sk.
func (k *Keys) open(sk StoredKey) (jose.JSONWebKey, error) {
	jwe, err := jose.ParseEncryptedCompact(sk.PrivateJWE, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return jose.JSONWebKey{}, fmt.Errorf("idp: signing key %s: %w", sk.ID, err)
	}
	plain, err := jwe.Decrypt(k.master)
	if err != nil {
		return jose.JSONWebKey{}, fmt.Errorf("idp: signing key %s cannot be decrypted with this master key (was KADENS_MASTER_KEY or <data-dir>/master.key changed?): %w", sk.ID, err)
	}
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(plain); err != nil {
		return jose.JSONWebKey{}, fmt.Errorf("idp: signing key %s: %w", sk.ID, err)
	}
	jwk.KeyID = sk.ID
	return jwk, nil
}

// Sign returns claims as a compact JWS signed with the active key.
func (k *Keys) Sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("idp: encode claims: %w", err)
	}
	k.mu.RLock()
	signer := k.signer
	k.mu.RUnlock()
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("idp: sign token: %w", err)
	}
	return jws.CompactSerialize()
}

// active returns the private signing key (with its kid).
func (k *Keys) active() jose.JSONWebKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.private
}

// PublicKey returns the published key with id kid.
func (k *Keys) PublicKey(kid string) (jose.JSONWebKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	key, ok := k.public[kid]
	return key, ok
}

// JWKS returns the published key set.
func (k *Keys) JWKS() jose.JSONWebKeySet {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), k.published...)}
}

// ActiveKID returns the id of the key that signs new tokens.
func (k *Keys) ActiveKID() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.activeKID
}

// Refresh reloads the keys if the last load is older than minAge; it lets a
// verifier that meets an unknown kid pick up another process's rotation
// without reloading on every bad token.
func (k *Keys) Refresh(ctx context.Context, minAge time.Duration) {
	k.mu.RLock()
	fresh := time.Since(k.loadedAt) < minAge
	k.mu.RUnlock()
	if fresh {
		return
	}
	if err := k.Load(ctx); err != nil {
		k.log.Error("reload signing keys", "err", err)
	}
}

// Run reloads the keys every interval until ctx ends, so rotations made by
// other processes or the CLI are picked up and expired keys unpublished.
func (k *Keys) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			k.Refresh(ctx, 0)
		}
	}
}

// MasterKey returns the key that encrypts signing keys at rest: the
// configured base64 value, or the content of <dataDir>/master.key, which is
// created with a fresh random key on first use.
func MasterKey(configured, dataDir string) ([]byte, error) {
	if configured != "" {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(configured))
		if err != nil || len(key) != 32 {
			return nil, errors.New("master key: want 32 bytes in base64 (e.g. `openssl rand -base64 32`)")
		}
		return key, nil
	}
	path := filepath.Join(dataDir, "master.key")
	if b, err := os.ReadFile(path); err == nil {
		return MasterKey(string(b), "")
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("master key: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	// Written whole under a temporary name and linked into place, which
	// fails if another process created the key first (then its key is
	// the one): a start killed halfway leaves no empty master.key, and two
	// first starts do not each keep a key of their own.
	err := atomicfile.WriteNew(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600)
	if errors.Is(err, os.ErrExist) {
		return MasterKey("", dataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	return key, nil
}
