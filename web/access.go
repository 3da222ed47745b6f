package web

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
)

// AccessStore is what the routes of users, keys, sessions and the audit
// log need of the store.
type AccessStore interface {
	auth.LoginStore
	CreateUser(ctx context.Context, email, role, passwordHash string) (marquee.User, error)
	Users(ctx context.Context) ([]marquee.User, error)
	User(ctx context.Context, id int64) (marquee.User, error)
	UpdateUser(ctx context.Context, id int64, c marquee.UserChange) (marquee.User, error)
	DeleteUser(ctx context.Context, id int64, allow func(old marquee.User) error) error
	CreateKey(ctx context.Context, k marquee.APIKey, hash string) (marquee.APIKey, error)
	Keys(ctx context.Context) ([]marquee.APIKey, error)
	Key(ctx context.Context, id int64) (marquee.APIKey, error)
	RevokeKey(ctx context.Context, id int64) error
	AuditLog(ctx context.Context, f marquee.AuditFilter) ([]marquee.AuditEntry, int, error)
}

// Pseudo-scopes of routes: public ones need no credential, signed-in
// ones any valid credential.
const (
	public   marquee.Scope = ""
	signedIn marquee.Scope = "signed-in"
)

// SessionCookie is the name of the session cookie.
const SessionCookie = "marquee_session"

// principalKey is the user value a guarded route's principal is kept in.
const principalKey = "marquee.principal"

// guard returns h behind scope: a request passes with a credential that
// holds it (or, for signedIn, any valid credential), and h finds who it
// is with principal. Public routes pass as they are.
func (s *Server) guard(scope marquee.Scope, h handler) handler {
	if scope == public {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) error {
		p, err := s.authenticate(ctx)
		if err != nil {
			return err
		}
		if scope != signedIn && !p.Scopes.Has(scope) {
			return &marquee.Error{Kind: marquee.KindForbidden, Message: "forbidden", Missing: scope}
		}
		ctx.SetUserValue(principalKey, p)
		return h(ctx)
	}
}

// authenticate tells who a request is: by its bearer token, else by its
// session cookie (whose state-changing requests must pass the CSRF
// check), else no one.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (auth.Principal, error) {
	if s.cfg.InsecureAdmin {
		return auth.Owner("insecure-admin"), nil
	}
	if h := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization); len(h) > 0 {
		scheme, token, _ := bytes.Cut(h, []byte(" "))
		if !bytes.EqualFold(scheme, []byte("Bearer")) {
			return auth.Principal{}, marquee.Errorf(marquee.KindUnauthorized, "invalid bearer token")
		}
		return s.auth.Bearer(context.Background(), bytes.TrimSpace(token), s.now()) // never the RequestCtx: a load may outlive the request
	}
	cookie := ctx.Request.Header.Cookie(SessionCookie)
	if len(cookie) == 0 {
		// The message predates keys and sessions; clients match on it.
		return auth.Principal{}, marquee.Errorf(marquee.KindUnauthorized, "missing bearer token: send Authorization: Bearer <admin token>")
	}
	p, err := s.auth.Cookie(context.Background(), cookie, s.now())
	if err != nil {
		return p, err
	}
	if !ctx.IsGet() && !ctx.IsHead() && !ctx.IsOptions() {
		if err := checkCSRF(ctx, p.CSRF); err != nil {
			return p, err
		}
	}
	return p, nil
}

// checkCSRF refuses a cookie-authenticated change that does not come
// from this origin (Origin, else Referer) or lacks the session's token
// in X-CSRF-Token. Bearer-authenticated requests need neither: a browser
// never adds that header by itself.
func checkCSRF(ctx *fasthttp.RequestCtx, token string) error {
	origin := ctx.Request.Header.Peek("Origin")
	if len(origin) == 0 {
		if ref, err := url.Parse(string(ctx.Request.Header.Referer())); err == nil && ref.Host != "" {
			origin = []byte(ref.Scheme + "://" + ref.Host)
		}
	}
	scheme := "http"
	if ctx.IsTLS() || bytes.Equal(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https")) {
		scheme = "https"
	}
	if string(origin) != scheme+"://"+string(ctx.Host()) {
		return marquee.Errorf(marquee.KindForbidden, "cross-origin request refused: Origin must be %s://%s", scheme, ctx.Host())
	}
	if got := ctx.Request.Header.Peek("X-CSRF-Token"); len(got) == 0 || subtle.ConstantTimeCompare(got, []byte(token)) != 1 {
		return marquee.Errorf(marquee.KindForbidden, "missing or wrong X-CSRF-Token header (GET /api/v1/session gives it)")
	}
	return nil
}

// principal is who a guarded route's request is.
func principal(ctx *fasthttp.RequestCtx) auth.Principal {
	p, _ := ctx.UserValue(principalKey).(auth.Principal)
	return p
}

// audit returns sctx carrying who makes the request's changes (for the
// audit log the store writes with them): action and the names of the
// fields it changes.
func (s *Server) audit(sctx context.Context, ctx *fasthttp.RequestCtx, action string, fields []string) context.Context {
	return marquee.WithAudit(sctx, marquee.Audit{Actor: principal(ctx).Actor, IP: s.clientIP(ctx), Action: action, Fields: fields})
}

func (s *Server) clientIP(ctx *fasthttp.RequestCtx) string {
	return clientIP(ctx, s.cfg.TrustedProxies).String()
}

// pathID reads the id after prefix in the path; what names the entity
// in the 404 of one that cannot be.
func pathID(ctx *fasthttp.RequestCtx, prefix, what string) (int64, error) {
	seg := bytes.TrimPrefix(ctx.Path(), []byte(prefix))
	id, err := strconv.ParseInt(string(seg), 10, 64)
	if err != nil || id < 1 {
		return 0, marquee.Errorf(marquee.KindNotFound, "%s %q not found", what, seg)
	}
	return id, nil
}

// MaxAccessBody bounds the bodies of users, keys and sign-ins.
const MaxAccessBody = 4 << 10

// handleCreateKey serves POST /api/v1/keys: 201 with the key and, this
// once, its secret. A key gets no scope its creator lacks.
func (s *Server) handleCreateKey(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (marquee.KeyInput, error) { return marquee.ParseKeyInput(b, s.now()) })
	if err != nil {
		return err
	}
	p := principal(ctx)
	if err := p.MayManage("", in.Scopes); err != nil {
		return err
	}
	secret, hash := auth.NewSecret(auth.KeyPrefix)
	k, err := s.access.CreateKey(s.audit(sctx, ctx, "create", []string{"name", "scopes", "expiresAt"}),
		marquee.APIKey{Name: in.Name, Prefix: secret[:auth.PrefixLen], Scopes: in.Scopes, CreatedBy: p.Actor, ExpiresAt: in.ExpiresAt}, hash)
	if err != nil {
		return err
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/keys/"+strconv.FormatInt(k.ID, 10))
	writeJSON(ctx, fasthttp.StatusCreated, keyCreated{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes.List(),
		CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, Key: secret})
	return nil
}

// keyCreated is the answer of a key create: the key, and its secret.
type keyCreated struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	Prefix    string          `json:"prefix"`
	Scopes    []marquee.Scope `json:"scopes"`
	CreatedBy string          `json:"createdBy"`
	CreatedAt time.Time       `json:"createdAt"`
	ExpiresAt *time.Time      `json:"expiresAt"`
	Key       string          `json:"key"` // the secret, shown only here
}

// handleListKeys serves GET /api/v1/keys: every key, revoked ones too,
// with when each was last used (as of the last batch).
func (s *Server) handleListKeys(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	keys, err := s.access.Keys(sctx)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"keys": keys})
	return nil
}

// handleRevokeKey serves DELETE /api/v1/keys/{id}: 204 once revoked
// here; every instance refuses it within the feed's bound. Only a
// credential that holds every scope of the key may revoke it (a key's
// scopes never change, so reading them first is enough).
func (s *Server) handleRevokeKey(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	id, err := pathID(ctx, "/api/v1/keys/", "key")
	if err != nil {
		return err
	}
	k, err := s.access.Key(sctx, id)
	if err != nil {
		return err
	}
	if err := principal(ctx).MayManage("", k.Scopes); err != nil {
		return err
	}
	if err := s.writer.visible(sctx, s.access.RevokeKey(s.audit(sctx, ctx, "revoke", nil), id), "key"); err != nil {
		return err
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}

// handleCreateUser serves POST /api/v1/users.
func (s *Server) handleCreateUser(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (marquee.UserInput, error) { return marquee.ParseUserInput(b, true) })
	if err != nil {
		return err
	}
	if err := principal(ctx).MayManageUser(*in.Role); err != nil {
		return err
	}
	hash, err := auth.HashPassword(*in.Password)
	if err != nil {
		return err
	}
	u, err := s.access.CreateUser(s.audit(sctx, ctx, "create", []string{"email", "role", "password"}), *in.Email, *in.Role, hash)
	if err != nil {
		return err
	}
	ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/users/"+strconv.FormatInt(u.ID, 10))
	writeJSON(ctx, fasthttp.StatusCreated, u)
	return nil
}

// handleListUsers serves GET /api/v1/users.
func (s *Server) handleListUsers(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	users, err := s.access.Users(sctx)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"users": users})
	return nil
}

// handleGetUser serves GET /api/v1/users/{id}.
func (s *Server) handleGetUser(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	id, err := pathID(ctx, "/api/v1/users/", "user")
	if err != nil {
		return err
	}
	u, err := s.access.User(sctx, id)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, u)
	return nil
}

// mayManage is auth's rule of principals for a change of a stored user
// (asked in the store's transaction): p must be allowed to manage the
// user as stored, and as it will be with role (nil: unchanged).
func mayManage(p auth.Principal, role *string) func(old marquee.User) error {
	return func(old marquee.User) error {
		if err := p.MayManageUser(old.Role); err != nil {
			return err
		}
		if role != nil {
			return p.MayManageUser(*role)
		}
		return nil
	}
}

// handleUpdateUser serves PUT /api/v1/users/{id}: the fields present
// change (email, role, password); a changed role or password ends the
// user's sessions.
func (s *Server) handleUpdateUser(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	id, err := pathID(ctx, "/api/v1/users/", "user")
	if err != nil {
		return err
	}
	in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (marquee.UserInput, error) { return marquee.ParseUserInput(b, false) })
	if err != nil {
		return err
	}
	c := marquee.UserChange{Email: in.Email, Role: in.Role, Allow: mayManage(principal(ctx), in.Role)}
	var fields []string
	for name, set := range map[string]bool{"email": in.Email != nil, "role": in.Role != nil, "password": in.Password != nil} {
		if set {
			fields = append(fields, name)
		}
	}
	slices.Sort(fields)
	if in.Password != nil {
		old, err := s.access.User(sctx, id)
		if err != nil {
			return err
		}
		email := old.Email
		if in.Email != nil {
			email = *in.Email
		}
		if msg := marquee.CheckPassword(*in.Password, &email); msg != "" {
			return marquee.Invalid("invalid user", marquee.Problems{"password": msg})
		}
		hash, err := auth.HashPassword(*in.Password)
		if err != nil {
			return err
		}
		c.PasswordHash = &hash
	}
	u, err := s.access.UpdateUser(s.audit(sctx, ctx, "update", fields), id, c)
	if err := s.writer.visible(sctx, err, "user"); err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, u)
	return nil
}

// handleDeleteUser serves DELETE /api/v1/users/{id}.
func (s *Server) handleDeleteUser(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	id, err := pathID(ctx, "/api/v1/users/", "user")
	if err != nil {
		return err
	}
	err = s.access.DeleteUser(s.audit(sctx, ctx, "delete", nil), id, mayManage(principal(ctx), nil))
	if err := s.writer.visible(sctx, err, "user"); err != nil {
		return err
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}

// sessionBody is the answer of the session routes: who the request is.
type sessionBody struct {
	Actor     string          `json:"actor"`
	User      *marquee.User   `json:"user,omitempty"`
	KeyID     int64           `json:"keyId,omitempty"`
	Scopes    []marquee.Scope `json:"scopes"`
	CSRFToken string          `json:"csrfToken,omitempty"`
	ExpiresAt *time.Time      `json:"expiresAt,omitempty"`
}

func (s *Server) sessionBody(sctx context.Context, p auth.Principal) (sessionBody, error) {
	b := sessionBody{Actor: p.Actor, KeyID: p.KeyID, Scopes: p.Scopes.List(), CSRFToken: p.CSRF}
	if p.UserID != 0 {
		u, err := s.access.User(sctx, p.UserID)
		if err != nil {
			return b, err
		}
		b.User = &u
	}
	return b, nil
}

// handleSignIn serves POST /api/v1/session: {email, password} or {key}
// opens a session and sets its cookie (a new id at every sign-in).
func (s *Server) handleSignIn(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	in, err := readJSON(ctx, MaxAccessBody, parseLogin)
	if err != nil {
		return err
	}
	in.IP = s.clientIP(ctx)
	si, err := s.auth.SignIn(sctx, s.access, in, s.now())
	if err != nil {
		return err
	}
	// A new id at every sign-in: the session the request came with, if
	// any, ends (no fixation).
	if old := ctx.Request.Header.Cookie(SessionCookie); len(old) > 0 {
		if err := s.writer.visible(sctx, s.access.DeleteSession(sctx, auth.HashSecret(string(old))), "session"); err != nil {
			return err
		}
	}
	s.setSessionCookie(ctx, si.Cookie, si.ExpiresAt)
	b, err := s.sessionBody(sctx, si.Principal)
	if err != nil {
		return err
	}
	b.ExpiresAt = &si.ExpiresAt
	writeJSON(ctx, fasthttp.StatusCreated, b)
	return nil
}

// setSessionCookie sets the session cookie to value until expires; ""
// and fasthttp.CookieExpireDelete clear it. A clearing cookie has the
// same path and attributes as the one it replaces, or a browser keeps
// the old one.
func (s *Server) setSessionCookie(ctx *fasthttp.RequestCtx, value string, expires time.Time) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(SessionCookie)
	c.SetValue(value)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetSecure(s.cfg.CookieSecure || ctx.IsTLS())
	c.SetExpire(expires)
	ctx.Response.Header.SetCookie(c)
}

func parseLogin(body []byte) (auth.Login, error) {
	var in struct {
		Email, Password, Key *string
	}
	p := marquee.Problems{}
	if err := json.Unmarshal(body, &in); err != nil {
		return auth.Login{}, marquee.Invalid("invalid sign-in", marquee.Problems{"body": "must be a JSON object with email and password, or key"})
	}
	var out auth.Login
	switch {
	case in.Key != nil && (in.Email != nil || in.Password != nil):
		p["key"] = "give a key, or an email and a password, not both"
	case in.Key != nil:
		out.Key = *in.Key
	default:
		switch {
		case in.Email == nil || *in.Email == "":
			p["email"] = "is required (or give a key)"
		case len(*in.Email) > marquee.MaxEmailLen:
			// No account has one: refused before it is counted or audited.
			p["email"] = fmt.Sprintf("is longer than %d bytes", marquee.MaxEmailLen)
		default:
			out.Email = *in.Email
		}
		if in.Password == nil || *in.Password == "" {
			p["password"] = "is required"
		} else {
			out.Password = *in.Password
		}
	}
	out.Email = strings.ToLower(strings.TrimSpace(out.Email))
	return out, marquee.Invalid("invalid sign-in", p)
}

// handleGetSession serves GET /api/v1/session: who you are, your scopes,
// and (for a session) the CSRF token its changes must send.
func (s *Server) handleGetSession(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	b, err := s.sessionBody(sctx, principal(ctx))
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, b)
	return nil
}

// handleSignOut serves DELETE /api/v1/session: the session ends (on
// every instance) and its cookie is cleared.
func (s *Server) handleSignOut(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	if err := s.auth.SignOut(sctx, s.access, principal(ctx), s.clientIP(ctx)); err != nil {
		return err
	}
	s.setSessionCookie(ctx, "", fasthttp.CookieExpireDelete)
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}

// handleAudit serves GET /api/v1/audit: entries newest first, filtered
// by actor, entity and time, paged by offset and limit.
func (s *Server) handleAudit(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	args := ctx.QueryArgs()
	f := marquee.AuditFilter{Actor: string(args.Peek("actor")), Entity: string(args.Peek("entity")), Limit: 50}
	p := marquee.Problems{}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v, ok := param(args, t.name); ok {
			tv, err := time.Parse(time.RFC3339, string(v))
			if err != nil {
				p[t.name] = "must be an RFC 3339 time"
			}
			*t.dst = tv
		}
	}
	for _, n := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"offset", &f.Offset, 0, 1 << 30}, {"limit", &f.Limit, 1, 500}} {
		if v, ok := param(args, n.name); ok {
			i, err := strconv.Atoi(string(v))
			if err != nil || i < n.min || i > n.max {
				p[n.name] = "must be an integer from " + strconv.Itoa(n.min) + " to " + strconv.Itoa(n.max)
			}
			*n.dst = i
		}
	}
	if err := marquee.Invalid("invalid query", p); err != nil {
		return err
	}
	entries, total, err := s.access.AuditLog(sctx, f)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"entries": entries, "total": total, "offset": f.Offset, "limit": f.Limit})
	return nil
}

// metricsGuard puts /metrics behind token when one is set
// (-metrics-token); Prometheus sends it as a bearer token.
func metricsGuard(token string, h handler) handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return func(ctx *fasthttp.RequestCtx) error {
		scheme, got, _ := bytes.Cut(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization), []byte(" "))
		if !bytes.EqualFold(scheme, []byte("Bearer")) || subtle.ConstantTimeCompare(bytes.TrimSpace(got), want) != 1 {
			return marquee.Errorf(marquee.KindUnauthorized, "missing or wrong metrics token: send Authorization: Bearer <-metrics-token>")
		}
		return h(ctx)
	}
}

// handleChangePassword serves PUT /api/v1/session/password: a signed-in
// user changes their own password, giving the current one
// ({"current","password"}). Their other sessions end; this one too,
// as every session of a user whose password changed.
func (s *Server) handleChangePassword(sctx context.Context, ctx *fasthttp.RequestCtx) error {
	p := principal(ctx)
	if p.UserID == 0 {
		return marquee.Errorf(marquee.KindForbidden, "only a user signed in with a password can change it")
	}
	type change struct{ Current, Password *string }
	in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (in change, err error) {
		if json.Unmarshal(b, &in) != nil {
			err = marquee.Invalid("invalid password change", marquee.Problems{"body": "must be a JSON object with current and password"})
		}
		return in, err
	})
	if err != nil {
		return err
	}
	u, err := s.access.User(sctx, p.UserID)
	if err != nil {
		return err
	}
	prob := marquee.Problems{}
	if in.Current == nil {
		prob["current"] = "is required"
	}
	if in.Password == nil {
		prob["password"] = "is required"
	} else if msg := marquee.CheckPassword(*in.Password, &u.Email); msg != "" {
		prob["password"] = msg
	}
	if err := marquee.Invalid("invalid password change", prob); err != nil {
		return err
	}
	// Checked last, so that only a well-formed change counts as a guess;
	// throttled as sign-ins are.
	if err := s.auth.VerifyPassword(sctx, s.access, p, u.Email, *in.Current, s.clientIP(ctx), s.now()); err != nil {
		return err
	}
	newHash, err := auth.HashPassword(*in.Password)
	if err != nil {
		return err
	}
	_, err = s.access.UpdateUser(s.audit(sctx, ctx, "update", []string{"password"}), p.UserID, marquee.UserChange{PasswordHash: &newHash})
	if err := s.writer.visible(sctx, err, "user"); err != nil {
		return err
	}
	s.setSessionCookie(ctx, "", fasthttp.CookieExpireDelete)
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}
