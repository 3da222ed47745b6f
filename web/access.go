package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
	"marquee/reports"
)

// AccessStore is what the routes of users, keys, sessions and the audit
// log need of the store.
type AccessStore interface {
	auth.SetupStore
	HasUsers(ctx context.Context) (bool, error)
	CreateUser(ctx context.Context, u marquee.User, passwordHash string) (marquee.User, error)
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

// sessions is what the session routes (sign-in, sign-out, setup, the
// session's answer, password changes) share: the store of users and
// sessions, auth's rules, the session cookie's settings and the
// currency the console is told.
type sessions struct {
	requester
	access       AccessStore
	auth         *auth.Auth
	writer       *writer
	now          func() time.Time
	cookieSecure bool            // -cookie-secure: the session cookie is Secure on plain HTTP too
	currency     string          // of prices and spend (reports.Reporter.Currency), told to the console
	reportKeys   *reports.KeySet // the key-values reports count (reports.Reporter.Keys), told to the console
}

// MaxAccessBody bounds the bodies of users, keys and sign-ins.
const MaxAccessBody = 4 << 10

// handleCreateKey serves POST /api/v1/keys: 201 with the key and, this
// once, its secret. A key gets no scope its creator lacks. The route
// gives sctx the request's audit.
func handleCreateKey(st AccessStore, campaigns CampaignStore, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (marquee.KeyInput, error) { return marquee.ParseKeyInput(b, now()) })
		if err != nil {
			return err
		}
		p := principal(ctx)
		if err := p.MayManage("", in.Scopes); err != nil {
			return err
		}
		if err := knownAdvertisers(sctx, campaigns, in.Bounds, "invalid key"); err != nil {
			return err
		}
		secret, hash := auth.NewSecret(auth.KeyPrefix)
		k, err := st.CreateKey(marquee.WithAuditFields(sctx, append([]string{"name", "scopes", "expiresAt"}, in.Bounds.Fields()...)),
			marquee.APIKey{Name: in.Name, Prefix: secret[:auth.PrefixLen], Scopes: in.Scopes, Bounds: in.Bounds, CreatedBy: p.Actor, ExpiresAt: in.ExpiresAt}, hash)
		if err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/keys/"+strconv.FormatInt(k.ID, 10))
		writeJSON(ctx, fasthttp.StatusCreated, keyCreated{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes.List(), Bounds: k.Bounds,
			CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, Key: secret})
		return nil
	}
}

// keyCreated is the answer of a key create: the key, and its secret.
type keyCreated struct {
	ID     int64           `json:"id"`
	Name   string          `json:"name"`
	Prefix string          `json:"prefix"`
	Scopes []marquee.Scope `json:"scopes"`
	marquee.Bounds
	CreatedBy string     `json:"createdBy"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
	Key       string     `json:"key"` // the secret, shown only here
}

// knownAdvertisers refuses bounds that name an advertiser that does not
// exist (400 naming it, under what).
func knownAdvertisers(sctx context.Context, campaigns CampaignStore, b marquee.Bounds, what string) error {
	for i, id := range b.Advertisers {
		_, err := campaigns.Advertiser(sctx, id)
		if marquee.KindOf(err) == marquee.KindNotFound {
			return marquee.Invalid(what, marquee.Problems{fmt.Sprintf("advertisers[%d]", i): fmt.Sprintf("no advertiser %d", id)})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// userBounds checks that a user of role may have bounds b (see
// marquee.CheckRoleBounds) and that its advertisers exist.
func userBounds(sctx context.Context, campaigns CampaignStore, role string, b marquee.Bounds) error {
	if p := marquee.CheckRoleBounds(role, b); len(p) > 0 {
		return marquee.Invalid("invalid user", p)
	}
	return knownAdvertisers(sctx, campaigns, b, "invalid user")
}

// handleRevokeKey serves DELETE /api/v1/keys/{id}: 204 once revoked
// here; every instance refuses it within the feed's bound. Only a
// credential that holds every scope of the key may revoke it (a key's
// scopes never change, so reading them first is enough). Audited as
// "revoke" by the route.
func handleRevokeKey(st AccessStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "key")
		if err != nil {
			return err
		}
		k, err := st.Key(sctx, id)
		if err != nil {
			return err
		}
		if err := principal(ctx).MayManage("", k.Scopes); err != nil {
			return err
		}
		if err := wr.visible(sctx, revokeKey(sctx, st, id), "key"); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// userResource is what the generic get needs of a user: its name and its
// id's place in the path.
var userResource = resource[int64, marquee.UserInput]{what: "user", key: func(ctx *fasthttp.RequestCtx) (int64, error) { return pathID(ctx, "user") }}

// handleCreateUser serves POST /api/v1/users (audited by the route): an
// advertiser user names its advertisers, a publisher user its sites.
func handleCreateUser(st AccessStore, campaigns CampaignStore, rq requester, mailer Mailer, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (marquee.UserInput, error) { return marquee.ParseUserInput(b, true) })
		if err != nil {
			return err
		}
		if err := principal(ctx).MayManageUser(*in.Role); err != nil {
			return err
		}
		var b marquee.Bounds
		if in.Bounds != nil {
			b = *in.Bounds
		}
		if err := userBounds(sctx, campaigns, *in.Role, b); err != nil {
			return err
		}
		fields := append([]string{"email", "role", "password"}, b.Fields()...)
		var hash, secret string
		var expires time.Time
		if in.Password != nil {
			if hash, err = auth.HashPassword(*in.Password); err != nil {
				return err
			}
		} else {
			secret, hash, expires = auth.NewInvitation(now())
			fields[2] = "invitation"
		}
		u, err := st.CreateUser(marquee.WithAuditFields(sctx, fields), marquee.User{Email: *in.Email, Role: *in.Role, Bounds: b}, hash)
		if err != nil {
			return err
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, "/api/v1/users/"+strconv.FormatInt(u.ID, 10))
		if secret == "" {
			writeJSON(ctx, fasthttp.StatusCreated, u)
			return nil
		}
		writeJSON(ctx, fasthttp.StatusCreated, invited{u, sendInvitation(sctx, ctx, rq, mailer, campaigns, &u, secret, expires)})
		return nil
	}
}

// invited is a user and the invitation just made for them.
type invited struct {
	marquee.User
	Invite invitation `json:"invite"`
}

// sendInvitation mails u the link that sets their password (secret's,
// until expires), saying as what they join and which advertisers or sites
// they will see; the link is in the answer when no mail went.
func sendInvitation(sctx context.Context, ctx *fasthttp.RequestCtx, rq requester, mailer Mailer, campaigns CampaignStore, u *marquee.User, secret string, expires time.Time) invitation {
	inv := invitation{ExpiresAt: expires, Sees: seesText(sctx, campaigns, u.Bounds)}
	link := rq.consoleOrigin(ctx) + InvitationPath + auth.InvitationToken(u.ID, secret)
	if mailer != nil {
		err := mailer.SendText(sctx, u.Email, "Your Marquee account", "You are invited to Marquee as "+u.Role+"; you will see "+inv.Sees+".\n\n"+
			"Set your password with this link (it works once, until "+expires.Format(time.RFC1123)+"):\n\n"+link+"\n")
		inv.Sent = err == nil
		if err != nil {
			inv.MailError = err.Error()
		}
	}
	if !inv.Sent {
		inv.URL = link // shown once, to whoever invites: nothing else holds it
	}
	return inv
}

// seesText says what an account bound by b sees: its advertisers or its
// sites by name, or everything its role allows.
func seesText(sctx context.Context, campaigns CampaignStore, b marquee.Bounds) string {
	switch {
	case len(b.Advertisers) > 0:
		names := make([]string, 0, len(b.Advertisers))
		for _, id := range b.Advertisers {
			name := "advertiser " + strconv.FormatInt(id, 10)
			if a, err := campaigns.Advertiser(sctx, id); err == nil {
				name = a.Name
			}
			names = append(names, name)
		}
		return "the advertisers " + strings.Join(names, ", ") + " only"
	case len(b.Sites) > 0:
		return "the sites " + strings.Join(b.Sites, ", ") + " only"
	}
	return "everything your role allows"
}

// handleInviteUser serves POST /api/v1/users/{id}/invitation (audited by
// the route): a new one-time link that sets user id's password — an
// invitation sent again (the last one's link stops working), or a
// password reset (the password stops working and the user's sessions
// end) — mailed, or answered when no mail goes. 201 as an invitation.
func handleInviteUser(st AccessStore, campaigns CampaignStore, rq requester, mailer Mailer, now func() time.Time, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "user")
		if err != nil {
			return err
		}
		secret, hash, expires := auth.NewInvitation(now())
		c := marquee.UserChange{PasswordHash: &hash, Allow: func(old marquee.User) error { return principal(ctx).MayManageUser(old.Role) }}
		u, err := st.UpdateUser(marquee.WithAuditFields(sctx, []string{"invitation"}), id, c)
		if err := wr.visible(sctx, err, "user"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusCreated, invited{u, sendInvitation(sctx, ctx, rq, mailer, campaigns, &u, secret, expires)})
		return nil
	}
}

// InvitationPath is where an invitation's link opens the console: the
// token follows.
const InvitationPath = "/admin/#/invite/"

// invitation is what creating a user without a password answers of its
// invitation: when it expires, whether it was mailed, and its link when
// it was not (the mail server's error, if it refused it).
type invitation struct {
	ExpiresAt time.Time `json:"expiresAt"`
	Sees      string    `json:"sees"` // what the account will see, as the mail says it
	Sent      bool      `json:"sent"`
	URL       string    `json:"url,omitempty"`
	MailError string    `json:"mailError,omitempty"`
}

// Mailer sends a plain-text email (the report mail's server).
type Mailer interface {
	SendText(ctx context.Context, to, subject, text string) error
}

// consoleOrigin is the origin the request came from: its Origin header (a
// browser's), else its Host over HTTP or HTTPS as it arrived.
func (r requester) consoleOrigin(ctx *fasthttp.RequestCtx) string {
	if r.public != "" {
		return r.public
	}
	if o := string(ctx.Request.Header.Peek("Origin")); strings.HasPrefix(o, "http://") || strings.HasPrefix(o, "https://") {
		return o
	}
	scheme := "http://"
	if ctx.IsTLS() {
		scheme = "https://"
	}
	return scheme + string(ctx.Host())
}

// handleAcceptInvitation serves POST /api/v1/invitations {"token",
// "password"} (public: the token is the credential): the invited user's
// password is set, once, and they are signed in (201 as a sign-in). A
// token that is not a live invitation is a 404, an expired one a 410;
// wrong tokens are throttled per address as failed sign-ins are.
func handleAcceptInvitation(a *sessions) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxAccessBody, marquee.ParseInvitationInput)
		if err != nil {
			return err
		}
		si, err := a.auth.AcceptInvitation(sctx, a.access, in.Token, in.Password, a.ip(ctx), a.now())
		if err := a.writer.visible(sctx, err, "user"); err != nil {
			return err
		}
		return a.answerSignedIn(sctx, ctx, si)
	}
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
// user's sessions. Audited as "update" by the route.
func handleUpdateUser(st AccessStore, campaigns CampaignStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "user")
		if err != nil {
			return err
		}
		in, err := readJSON(ctx, MaxAccessBody, func(b []byte) (marquee.UserInput, error) { return marquee.ParseUserInput(b, false) })
		if err != nil {
			return err
		}
		c := marquee.UserChange{Email: in.Email, Role: in.Role, Allow: mayManage(principal(ctx), in.Role)}
		if in.Role != nil || in.Bounds != nil {
			// The user's role and bounds as they will be: a role that is
			// not bound drops the bounds it had.
			old, err := st.User(sctx, id)
			if err != nil {
				return err
			}
			role, b := old.Role, old.Bounds
			if in.Role != nil {
				role = *in.Role
				if role != marquee.RoleAdvertiser && role != marquee.RolePublisher {
					b = marquee.Bounds{}
				}
			}
			if in.Bounds != nil {
				b = *in.Bounds
			}
			if err := userBounds(sctx, campaigns, role, b); err != nil {
				return err
			}
			c.Bounds = &b
		}
		var fields []string
		for name, set := range map[string]bool{"email": in.Email != nil, "role": in.Role != nil, "password": in.Password != nil,
			"advertisers": in.Bounds != nil && in.Bounds.Advertisers != nil, "sites": in.Bounds != nil && in.Bounds.Sites != nil} {
			if set {
				fields = append(fields, name)
			}
		}
		slices.Sort(fields)
		if in.Password != nil {
			old, err := st.User(sctx, id)
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
		u, err := st.UpdateUser(marquee.WithAuditFields(sctx, fields), id, c)
		if err := wr.visible(sctx, err, "user"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, u)
		return nil
	}
}

// handleDeleteUser serves DELETE /api/v1/users/{id} (audited by the
// route).
func handleDeleteUser(st AccessStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "user")
		if err != nil {
			return err
		}
		err = st.DeleteUser(sctx, id, mayManage(principal(ctx), nil))
		if err := wr.visible(sctx, err, "user"); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// sessionBody is the answer of the session routes: who the request is.
type sessionBody struct {
	Actor     string          `json:"actor"`
	User      *marquee.User   `json:"user,omitempty"`
	KeyID     int64           `json:"keyId,omitempty"`
	Scopes    []marquee.Scope `json:"scopes"`
	CSRFToken string          `json:"csrfToken,omitempty"`
	ExpiresAt *time.Time      `json:"expiresAt,omitempty"`
	// Currency is the ISO 4217 code of every price and spend (-currency).
	Currency string `json:"currency"`
	// ReportKeys are the key-values reports count (the install's
	// setting: GET /api/v1/settings/report-keys).
	ReportKeys []string `json:"reportKeys"`
	// An advertiser's or a publisher's account: its advertisers or its
	// sites (the console shows it only its world).
	marquee.Bounds
}

func (a *sessions) sessionBody(sctx context.Context, p auth.Principal) (sessionBody, error) {
	b := sessionBody{Actor: p.Actor, KeyID: p.KeyID, Scopes: p.Scopes.List(), CSRFToken: p.CSRF, Currency: a.currency, ReportKeys: a.reportKeys.Load(), Bounds: p.Bounds}
	if b.ReportKeys == nil {
		b.ReportKeys = []string{}
	}
	if p.UserID != 0 {
		u, err := a.access.User(sctx, p.UserID)
		if err != nil {
			return b, err
		}
		b.User = &u
	}
	return b, nil
}

// handleSignIn serves POST /api/v1/session: {email, password} or {key}
// opens a session and sets its cookie (a new id at every sign-in).
func handleSignIn(a *sessions) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxAccessBody, parseLogin)
		if err != nil {
			return err
		}
		in.IP = a.ip(ctx)
		si, err := a.auth.SignIn(sctx, a.access, in, a.now())
		if err != nil {
			return err
		}
		// A new id at every sign-in: the session the request came with, if
		// any, ends (no fixation).
		if old := ctx.Request.Header.Cookie(SessionCookie); len(old) > 0 {
			if err := a.writer.visible(sctx, a.access.DeleteSession(sctx, auth.HashSecret(string(old))), "session"); err != nil {
				return err
			}
		}
		return a.answerSignedIn(sctx, ctx, si)
	}
}

// answerSignedIn answers a request that opened session si: its cookie,
// and 201 with who it is, its CSRF token and when it ends.
func (a *sessions) answerSignedIn(sctx context.Context, ctx *fasthttp.RequestCtx, si auth.SignedIn) error {
	a.setSessionCookie(ctx, si.Cookie, si.ExpiresAt)
	b, err := a.sessionBody(sctx, si.Principal)
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
func (a *sessions) setSessionCookie(ctx *fasthttp.RequestCtx, value string, expires time.Time) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKey(SessionCookie)
	c.SetValue(value)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	c.SetSecure(a.cookieSecure || ctx.IsTLS())
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
func handleGetSession(a *sessions) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		b, err := a.sessionBody(sctx, principal(ctx))
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, b)
		return nil
	}
}

// handleSignOut serves DELETE /api/v1/session: the session ends (on
// every instance) and its cookie is cleared.
func handleSignOut(a *sessions) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if err := a.auth.SignOut(sctx, a.access, principal(ctx), a.ip(ctx)); err != nil {
			return err
		}
		a.setSessionCookie(ctx, "", fasthttp.CookieExpireDelete)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// handleAudit serves GET /api/v1/audit: entries newest first, filtered
// by actor, entity and time, paged by offset and limit.
func handleAudit(st AccessStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
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
		entries, total, err := st.AuditLog(sctx, f)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"entries": entries, "total": total, "offset": f.Offset, "limit": f.Limit})
		return nil
	}
}

// handleChangePassword serves PUT /api/v1/session/password: a signed-in
// user changes their own password, giving the current one
// ({"current","password"}). Their other sessions end; this one too,
// as every session of a user whose password changed.
func handleChangePassword(a *sessions) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
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
		u, err := a.access.User(sctx, p.UserID)
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
		if err := a.auth.VerifyPassword(sctx, a.access, p, u.Email, *in.Current, a.ip(ctx), a.now()); err != nil {
			return err
		}
		newHash, err := auth.HashPassword(*in.Password)
		if err != nil {
			return err
		}
		_, err = a.access.UpdateUser(a.audit(sctx, ctx, "update", []string{"password"}), p.UserID, marquee.UserChange{PasswordHash: &newHash})
		if err := a.writer.visible(sctx, err, "user"); err != nil {
			return err
		}
		a.setSessionCookie(ctx, "", fasthttp.CookieExpireDelete)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}
