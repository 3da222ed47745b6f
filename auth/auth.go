// Package auth tells who a request is and what it may do: API keys (a
// random secret shown once, stored as its SHA-256 hash), people's
// sessions (a random cookie, stored as its hash, opened with a bcrypt-
// hashed password or a key), the bootstrap -admin-token, and the
// throttling of failed logins.
//
// Credentials are looked up through bounded caches that the changelog
// feed empties whenever a key, user or session changes on any instance
// (Invalidate), so a revocation holds everywhere within the feed's
// propagation bound. When a key or session was last used is kept in
// memory and written in batches (Flush), never per request.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"marquee"
	"marquee/cache"
)

// KeyPrefix starts every API key's secret; PrefixLen characters of a
// secret are kept in the clear to recognise it by.
const (
	KeyPrefix = "mq_"
	PrefixLen = 10
)

// Session lifetimes.
const (
	SessionIdle = 12 * time.Hour     // a session not used for this long ends
	SessionMax  = 7 * 24 * time.Hour // a session ends this long after sign-in
)

// loadTimeout bounds a credential's load from the store.
const loadTimeout = 5 * time.Second

// Principal is who a request is: the audit log's name for it, and its
// scopes.
type Principal struct {
	Actor  string
	Scopes marquee.ScopeSet
	UserID int64  // a user signed in, or 0
	Role   string // the user's role
	KeyID  int64  // the key used (directly or to sign in), or 0
	// Bounds are an advertiser's or a publisher's account's: what it may
	// see (the zero Bounds: everything its scopes allow).
	Bounds marquee.Bounds
	// Session is the hash of the session the request came with (by
	// cookie), "" for a bearer key.
	Session string
	// CSRF is the token a cookie-authenticated request that changes
	// state must send back (see CSRFToken).
	CSRF string
}

// Owner is the principal of the bootstrap token and of -insecure-admin:
// every scope.
func Owner(actor string) Principal {
	return Principal{Actor: actor, Scopes: marquee.AllScopes, Role: marquee.RoleOwner}
}

// Store is what auth needs of the store.
type Store interface {
	KeyByHash(ctx context.Context, hash string) (marquee.APIKey, error)
	Session(ctx context.Context, hash string) (marquee.Session, error)
	User(ctx context.Context, id int64) (marquee.User, error)
	Key(ctx context.Context, id int64) (marquee.APIKey, error)
	TouchKeys(ctx context.Context, used map[int64]time.Time) error
	TouchSessions(ctx context.Context, seen map[string]time.Time) error
}

// session is a cached session with what it signs in as.
type session struct {
	s marquee.Session
	p Principal
	k *marquee.APIKey // the key signed in with, if any: its expiry ends the session
}

// Auth authenticates requests. It is safe for concurrent use.
type Auth struct {
	// ClientBits are the leading bits of an IPv6 address that sign-in
	// throttles count as one client (0: DefaultClientBits; marquee serve's
	// -ivt-ipv6-prefix). Set before use.
	ClientBits int

	store    Store
	token    []byte // the bootstrap owner token; empty: none
	keys     *cache.Cache[[32]byte, marquee.APIKey]
	sessions *cache.Cache[[32]byte, session]

	mu       sync.Mutex
	keyUse   map[int64]time.Time
	seen     map[string]time.Time // sessions' last use since the last flush
	lastSeen map[string]time.Time // and the latest known of each cached session
}

// DefaultClientBits: an IPv6 client is its /64, a subscriber's.
const DefaultClientBits = 64

// New returns an Auth over store; token is the bootstrap owner token
// ("" for none); reg (if not nil) receives the caches' metrics.
func New(store Store, token string, reg prometheus.Registerer) *Auth {
	a := &Auth{store: store, token: []byte(token), keyUse: map[int64]time.Time{}, seen: map[string]time.Time{}, lastSeen: map[string]time.Time{}}
	a.keys = cache.New(cache.Config[[32]byte, marquee.APIKey]{Name: "key", Capacity: cache.Capacity{Entries: 10_000},
		Load: func(ctx context.Context, h [32]byte) (marquee.APIKey, error) {
			ctx, cancel := context.WithTimeout(ctx, loadTimeout)
			defer cancel()
			return store.KeyByHash(ctx, hex.EncodeToString(h[:]))
		}}, reg)
	a.sessions = cache.New(cache.Config[[32]byte, session]{Name: "session", Capacity: cache.Capacity{Entries: 10_000},
		Load: func(ctx context.Context, h [32]byte) (session, error) {
			ctx, cancel := context.WithTimeout(ctx, loadTimeout)
			defer cancel()
			return a.loadSession(ctx, h)
		}}, reg)
	return a
}

// Invalidate drops every cached credential: the feed calls it when a
// key, user or session changes (they change rarely; the next request of
// each loads it again).
func (a *Auth) Invalidate() {
	a.keys.InvalidateAll()
	a.sessions.InvalidateAll()
}

var (
	errBadToken   = marquee.Errorf(marquee.KindUnauthorized, "invalid bearer token")
	errExpiredKey = marquee.Errorf(marquee.KindUnauthorized, "key expired")
	errRevokedKey = marquee.Errorf(marquee.KindUnauthorized, "key revoked")
	errNoSession  = marquee.Errorf(marquee.KindUnauthorized, "session expired or signed out: sign in again")
)

// Bearer authenticates a bearer token at now: the bootstrap token, or an
// API key that is neither expired nor revoked.
func (a *Auth) Bearer(ctx context.Context, token []byte, now time.Time) (Principal, error) {
	if len(a.token) > 0 && subtle.ConstantTimeCompare(token, a.token) == 1 {
		return Owner("token"), nil
	}
	if !wellFormedKey(string(token)) {
		return Principal{}, errBadToken
	}
	h := sha256.Sum256(token)
	k, err := a.keys.Get(ctx, h)
	switch {
	case marquee.KindOf(err) == marquee.KindNotFound:
		return Principal{}, errBadToken
	case err != nil:
		return Principal{}, err
	case subtle.ConstantTimeCompare([]byte(k.Hash), []byte(hex.EncodeToString(h[:]))) != 1: // the store's word, compared in constant time
		return Principal{}, errBadToken
	case k.RevokedAt != nil:
		return Principal{}, errRevokedKey
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return Principal{}, errExpiredKey
	}
	a.mu.Lock()
	a.keyUse[k.ID] = now
	a.mu.Unlock()
	return Principal{Actor: keyActor(&k), Scopes: k.Scopes, KeyID: k.ID, Bounds: k.Bounds}, nil
}

func keyActor(k *marquee.APIKey) string { return "key:" + strconv.FormatInt(k.ID, 10) + " " + k.Name }

func userActor(u *marquee.User) string { return "user:" + strconv.FormatInt(u.ID, 10) + " " + u.Email }

// Cookie authenticates a session cookie's value at now.
func (a *Auth) Cookie(ctx context.Context, value []byte, now time.Time) (Principal, error) {
	if len(value) == 0 || len(value) > 100 {
		return Principal{}, errNoSession
	}
	s, err := a.sessions.Get(ctx, sha256.Sum256(value))
	switch {
	case marquee.KindOf(err) == marquee.KindNotFound:
		return Principal{}, errNoSession
	case err != nil:
		return Principal{}, err
	case !now.Before(s.s.ExpiresAt):
		return Principal{}, errNoSession
	case s.k != nil && !s.k.Usable(now):
		return Principal{}, errNoSession
	}
	a.mu.Lock()
	last := later(s.s.SeenAt, a.lastSeen[s.s.Hash])
	if now.Sub(last) >= SessionIdle {
		a.mu.Unlock()
		return Principal{}, errNoSession
	}
	a.seen[s.s.Hash], a.lastSeen[s.s.Hash] = now, now
	a.mu.Unlock()
	p := s.p
	p.CSRF = CSRFToken(value)
	return p, nil
}

// loadSession reads a session and what it signs in as. A session whose
// user or key is gone is no session.
func (a *Auth) loadSession(ctx context.Context, h [32]byte) (session, error) {
	se, err := a.store.Session(ctx, hex.EncodeToString(h[:]))
	if err != nil {
		return session{}, err
	}
	out := session{s: se}
	switch {
	case se.UserID != 0:
		u, err := a.store.User(ctx, se.UserID)
		if err != nil {
			return session{}, notFoundAs(err, "session")
		}
		out.p = userPrincipal(&u)
		out.p.Session = se.Hash
	default:
		k, err := a.store.Key(ctx, se.KeyID)
		if err != nil {
			return session{}, notFoundAs(err, "session")
		}
		out.k = &k
		out.p = Principal{Actor: keyActor(&k), Scopes: k.Scopes, KeyID: k.ID, Session: se.Hash, Bounds: k.Bounds}
	}
	return out, nil
}

func notFoundAs(err error, what string) error {
	if marquee.KindOf(err) == marquee.KindNotFound {
		return marquee.Errorf(marquee.KindNotFound, "%s not found", what)
	}
	return err
}

// Flush writes when keys and sessions were last used since the last
// flush; on failure they are kept for the next.
func (a *Auth) Flush(ctx context.Context) error {
	a.mu.Lock()
	keys, seen := a.keyUse, a.seen
	a.keyUse, a.seen = map[int64]time.Time{}, map[string]time.Time{}
	if len(a.lastSeen) > 100_000 { // forget what the store now knows
		a.lastSeen = map[string]time.Time{}
	}
	a.mu.Unlock()
	err := a.store.TouchKeys(ctx, keys)
	if err == nil {
		err = a.store.TouchSessions(ctx, seen)
	}
	if err != nil {
		a.mu.Lock()
		for id, t := range keys {
			a.keyUse[id] = later(t, a.keyUse[id])
		}
		for h, t := range seen {
			a.seen[h] = later(t, a.seen[h])
		}
		a.mu.Unlock()
	}
	return err
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// keyLen is the length of every API key: KeyPrefix and 32 bytes in
// unpadded URL-safe base64.
var keyLen = len(KeyPrefix) + base64.RawURLEncoding.EncodedLen(32)

// wellFormedKey reports whether s has the shape of an API key (NewSecret
// with KeyPrefix), whether or not one exists.
func wellFormedKey(s string) bool {
	if len(s) != keyLen || s[:len(KeyPrefix)] != KeyPrefix {
		return false
	}
	for _, c := range []byte(s[len(KeyPrefix):]) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// NewSecret returns a new random secret: prefix and 32 random bytes in
// URL-safe base64 (256 bits), with its hash as stored.
func NewSecret(prefix string) (secret, hash string) {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	secret = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, HashSecret(secret)
}

// HashSecret is how a secret is stored: its SHA-256, hex. Secrets are
// 256-bit random, so a fast hash is enough.
func HashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// CSRFToken is the token a session's state-changing requests must send
// in X-CSRF-Token: derived from the cookie's secret, so that only a page
// that was told it (at sign-in, or by GET /api/v1/session) knows it.
func CSRFToken(cookie []byte) string {
	h := sha256.Sum256(append([]byte("marquee csrf "), cookie...))
	return base64.RawURLEncoding.EncodeToString(h[:18])
}

// PasswordCost is bcrypt's cost for new passwords (tests lower it).
var PasswordCost = bcrypt.DefaultCost

// HashPassword hashes a password for storing.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), PasswordCost)
	return string(h), err
}

// dummyHash is compared against when an account does not exist, so that
// a failed login takes as long either way.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("marquee: no such account"), PasswordCost)
	return h
})

// CheckPassword reports whether password is the one hash was made from;
// with hash "" it spends the same time and reports false.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// MayManage is the one rule of principals (docs/api.md#who-may-manage-whom):
// a credential may create, change or remove a user or a key only when
// it holds every scope that principal holds — checked before a change
// against what the principal holds, and against what it will hold — and
// only an owner may touch an owner (role, for users; "" for keys). A
// session holds exactly what signed in (a user's role, or a key's
// scopes), so signing in never gains a scope either.
func (p Principal) MayManage(role string, scopes marquee.ScopeSet) error {
	if role == marquee.RoleOwner && p.Role != marquee.RoleOwner {
		return errOwnersOnly
	}
	if !p.Scopes.Contains(scopes) {
		return &marquee.Error{Kind: marquee.KindForbidden, Missing: (scopes &^ p.Scopes).List()[0],
			Message: "forbidden: a user or key cannot be given, or be changed while it holds, scopes you lack"}
	}
	return nil
}

var errOwnersOnly = &marquee.Error{Kind: marquee.KindForbidden, Message: "forbidden: only an owner can change, remove or make an owner"}

// MayManageUser is MayManage for a user of role.
func (p Principal) MayManageUser(role string) error {
	scopes, _ := marquee.RoleScopes(role)
	return p.MayManage(role, scopes)
}

// Apply drops every cached credential after a batch of the changelog
// that changes a key, user or session, and on a reload (it is a
// marquee.Applier).
func (a *Auth) Apply(_ context.Context, b *marquee.Batch) error {
	if b.Reload || b.Access {
		a.Invalidate()
	}
	return nil
}
