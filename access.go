package marquee

import (
	"context"
	"encoding/json"
	"net/mail"
	"strconv"
	"strings"
	"time"
)

// User is a person who signs in with an email and a password. The
// password's hash never leaves the store.
type User struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	Role  string `json:"role"`
	// Bounds: an advertiser user's advertisers, a publisher user's sites.
	Bounds
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// UserInput is the body of a user create (every field) or change (the
// fields present) once validated. Password is the plain text, to be
// hashed before it is stored.
type UserInput struct {
	Email    *string
	Role     *string
	Password *string
	Bounds   *Bounds // advertisers and sites, when either is given
}

// UserChange is a change of a stored user: the fields set change
// (PasswordHash is the new password's hash). Allow, when set, is asked
// in the store's transaction whether the change may be made to the user
// as stored.
type UserChange struct {
	Email, Role, PasswordHash *string
	Bounds                    *Bounds
	Allow                     func(old User) error
	// IfPasswordHash, when set, makes the change only while the stored
	// password hash is this one (else a KindGone error): an invitation's
	// acceptance, once.
	IfPasswordHash *string
}

// Password limits: long enough to resist guessing, short enough for
// bcrypt (which reads 72 bytes).
const (
	MinPassword = 12
	MaxPassword = 72
)

// MaxEmailLen is the longest email address, in bytes (RFC 5321's limit
// on a path less its brackets).
const MaxEmailLen = 254

// ParseUserInput decodes and validates a user body; create requires every
// field but the password (none: the user is invited to set one). A password must be MinPassword to MaxPassword bytes and not the
// email.
func ParseUserInput(body []byte, create bool) (UserInput, error) {
	var in UserInput
	p := Problems{}
	fields, ok := object(body, p, "email", "role", "password", "advertisers", "sites")
	if !ok {
		return in, Invalid("invalid user", p)
	}
	in.Bounds = parseBounds(fields, p)
	str := func(name string) *string {
		raw, ok := present(fields, name)
		if !ok {
			if create {
				p[name] = "is required"
			}
			return nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			p[name] = "must be a string"
			return nil
		}
		return &s
	}
	in.Email, in.Role = str("email"), str("role")
	if raw, ok := present(fields, "password"); ok { // none at create: an invitation
		var pw string
		if json.Unmarshal(raw, &pw) != nil {
			p["password"] = "must be a string"
		} else {
			in.Password = &pw
		}
	}
	if in.Email != nil {
		e, ok := normalEmail(*in.Email)
		if !ok {
			p["email"] = "must be an email address"
		}
		in.Email = &e
	}
	if in.Role != nil {
		if _, ok := RoleScopes(*in.Role); !ok {
			p["role"] = "must be one of " + strings.Join(Roles, ", ")
		}
	}
	if in.Password != nil {
		if msg := CheckPassword(*in.Password, in.Email); msg != "" {
			p["password"] = msg
		}
	}
	return in, Invalid("invalid user", p)
}

// normalEmail is email trimmed and lower-cased, and whether that is an
// email address of at most MaxEmailLen bytes.
func normalEmail(email string) (string, bool) {
	e := strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(e)
	return e, err == nil && a.Address == e && len(e) <= MaxEmailLen
}

// InvitationInput is the body that accepts an invitation: its token and
// the password the invited user chooses.
type InvitationInput struct{ Token, Password string }

// ParseInvitationInput decodes an invitation's acceptance; both fields
// are required (the password's rules are checked against the user's
// email once the token names the user).
func ParseInvitationInput(body []byte) (InvitationInput, error) {
	var in InvitationInput
	p := Problems{}
	fields, ok := object(body, p, "token", "password")
	if !ok {
		return in, Invalid("invalid invitation", p)
	}
	requiredStrings(fields, p, map[string]*string{"token": &in.Token, "password": &in.Password})
	return in, Invalid("invalid invitation", p)
}

// requiredStrings reads the string fields named in dst from fields into
// their places, noting in p each one absent or not a string.
func requiredStrings(fields map[string]json.RawMessage, p Problems, dst map[string]*string) {
	for name, to := range dst {
		raw, ok := present(fields, name)
		switch {
		case !ok:
			p[name] = "is required"
		case json.Unmarshal(raw, to) != nil:
			p[name] = "must be a string"
		}
	}
}

// SetupInput is the body of first-run set-up: the setup link's token,
// and the first owner's email and password.
type SetupInput struct{ Token, Email, Password string }

// ParseSetupInput decodes and validates a set-up body; every field is
// required, and the email and password follow the rules of a user's.
func ParseSetupInput(body []byte) (SetupInput, error) {
	var in SetupInput
	p := Problems{}
	fields, ok := object(body, p, "token", "email", "password")
	if !ok {
		return in, Invalid("invalid setup", p)
	}
	requiredStrings(fields, p, map[string]*string{"token": &in.Token, "email": &in.Email, "password": &in.Password})
	if _, bad := p["email"]; !bad {
		var ok bool
		if in.Email, ok = normalEmail(in.Email); !ok {
			p["email"] = "must be an email address"
		}
	}
	if _, bad := p["password"]; !bad {
		if msg := CheckPassword(in.Password, &in.Email); msg != "" {
			p["password"] = msg
		}
	}
	return in, Invalid("invalid setup", p)
}

// CheckPassword returns what is wrong with password for the account of
// email (nil when unknown), or "".
func CheckPassword(password string, email *string) string {
	switch {
	case len(password) < MinPassword:
		return "must be at least 12 characters"
	case len(password) > MaxPassword:
		return "must be at most 72 bytes"
	case email != nil && strings.EqualFold(password, *email):
		return "must not be the email"
	}
	return ""
}

// APIKey is a credential for programs: a random secret shown once, stored
// as its SHA-256 hash and a short visible prefix.
type APIKey struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"` // the secret's first characters, to recognise it by
	Hash       string     `json:"-"`      // the SHA-256 of the secret, hex (what is stored)
	Scopes     ScopeSet   `json:"-"`
	Bounds                // a key of an advertiser's or a publisher's: what it sees
	CreatedBy  string     `json:"createdBy"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// MarshalJSON writes the key with its scopes as a list.
func (k APIKey) MarshalJSON() ([]byte, error) {
	type plain APIKey
	return json.Marshal(struct {
		plain
		Scopes []Scope `json:"scopes"`
	}{plain(k), k.Scopes.List()})
}

// Usable reports whether the key authenticates at now: not revoked, not
// expired.
func (k *APIKey) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// KeyInput is the body of a key create once validated.
type KeyInput struct {
	Name      string
	Scopes    ScopeSet
	ExpiresAt *time.Time
	Bounds    Bounds
}

// ParseKeyInput decodes and validates a key create body: a name (1–100
// characters), one or more scopes, and an optional expiry after now.
func ParseKeyInput(body []byte, now time.Time) (KeyInput, error) {
	var in KeyInput
	p := Problems{}
	fields, ok := object(body, p, "name", "scopes", "expiresAt", "advertisers", "sites")
	if !ok {
		return in, Invalid("invalid key", p)
	}
	if b := parseBounds(fields, p); b != nil {
		in.Bounds = *b
	}
	if raw, ok := present(fields, "name"); !ok {
		p["name"] = "is required"
	} else if json.Unmarshal(raw, &in.Name) != nil || strings.TrimSpace(in.Name) == "" || len(in.Name) > 100 {
		p["name"] = "must be a string of 1 to 100 characters"
	} else if strings.ContainsRune(in.Name, 0) {
		p["name"] = "must not contain U+0000 (NUL)"
	}
	var names []string
	if raw, ok := present(fields, "scopes"); !ok {
		p["scopes"] = "is required"
	} else if json.Unmarshal(raw, &names) != nil || len(names) == 0 {
		p["scopes"] = "must be a non-empty array of scopes"
	} else if s, bad, ok := ParseScopes(names); !ok {
		p["scopes"] = "unknown scope " + strconv.Quote(bad) + " (scopes: " + strings.ReplaceAll(AllScopes.String(), " ", ", ") + ")"
	} else {
		in.Scopes = s
	}
	switch b := in.Bounds; {
	case len(b.Advertisers) > 0 && len(b.Sites) > 0:
		p["sites"] = "a key is bound to advertisers or to sites, not both"
	case b.Bound() && !BoundKeyScopes(b).Contains(in.Scopes):
		p["scopes"] = "a key bound to advertisers or sites may hold only " + strings.ReplaceAll(BoundKeyScopes(b).String(), " ", ", ")
	}
	if _, ok := present(fields, "expiresAt"); ok {
		t, ok := parseTimeField(fields, "expiresAt", p)
		if ok && !t.After(now) {
			p["expiresAt"] = "must be in the future"
		}
		t = t.UTC().Truncate(time.Millisecond)
		in.ExpiresAt = &t
	}
	return in, Invalid("invalid key", p)
}

// Session is a signed-in browser: a user's (or an API key's) credential
// kept by the server and named by a random cookie, stored as its hash.
type Session struct {
	Hash      string // SHA-256 of the cookie's secret, hex
	UserID    int64  // the user signed in, or 0
	KeyID     int64  // the API key signed in with, or 0
	CreatedAt time.Time
	SeenAt    time.Time
	ExpiresAt time.Time // the absolute end
}

// AuditEntry is one record of the audit log: who did what to which
// entity, from where. Fields names what changed, never a secret's value.
type AuditEntry struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	Actor    string    `json:"actor"` // "user:ID email", "key:ID name", "token" (-admin-token), "anonymous"
	Entity   string    `json:"entity"`
	EntityID string    `json:"entityId"`
	Action   string    `json:"action"` // create, replace, update, delete, revoke, login, login-failed, logout
	Fields   []string  `json:"fields"`
	IP       string    `json:"ip"`
	// Before and After are what a change of money held before and after
	// it, as JSON (absent where the entry records none: a document issued
	// has no before, one deleted no after).
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
}

// AuditFilter selects audit entries, newest first.
type AuditFilter struct {
	Actor    string // exact; "" any
	Entity   string // "" any
	From, To time.Time
	Offset   int
	Limit    int
}

// Audit is who makes the changes of a request and from where, carried by
// its context to the store, which records an entry with every changelog
// entry the request's writes make.
type Audit struct {
	Actor  string
	IP     string
	Fields []string // what the request changes, by name
	Action string   // the action recorded ("create", "revoke", "login"); "delete" when empty and the change is one
	// EntityID, when set, is recorded instead of the changed entity's id
	// or key (a session is recorded by its user or key, never its hash).
	EntityID string
}

type auditKey struct{}

// WithAudit returns ctx carrying a.
func WithAudit(ctx context.Context, a Audit) context.Context {
	return context.WithValue(ctx, auditKey{}, a)
}

// WithAuditFields returns ctx with the audit it carries naming fields as
// what the request changes (ctx as it is when it carries none).
func WithAuditFields(ctx context.Context, fields []string) context.Context {
	a, ok := AuditFrom(ctx)
	if !ok {
		return ctx
	}
	a.Fields = fields
	return WithAudit(ctx, a)
}

// AuditFrom returns the Audit ctx carries.
func AuditFrom(ctx context.Context) (Audit, bool) {
	a, ok := ctx.Value(auditKey{}).(Audit)
	return a, ok
}
