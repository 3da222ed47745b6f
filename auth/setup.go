package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// SetupTTL is how long a first-run setup link works.
const SetupTTL = time.Hour

// SetupStore is what first-run set-up needs of the store: sign-in's
// methods and a user made only when none exists.
type SetupStore interface {
	LoginStore
	CreateFirstUser(ctx context.Context, email, role, passwordHash string) (marquee.User, error)
}

var (
	errNoSetup  = marquee.Errorf(marquee.KindForbidden, "first-run set-up is off: this server has no bootstrap token")
	errBadSetup = marquee.Errorf(marquee.KindUnauthorized, "invalid or expired setup link: restart marquee serve for a new one, or run marquee users add")
)

// SetupToken returns a first-run setup token that works until expires:
// "<unix seconds>.<HMAC-SHA256 of them under the bootstrap token>".
// Nothing is stored: every instance with the same bootstrap token
// accepts it, and it stops working at expires or once any user exists
// (Setup makes the first user only). "" when there is no bootstrap token.
func (a *Auth) SetupToken(expires time.Time) string {
	if len(a.token) == 0 {
		return ""
	}
	unix := strconv.FormatInt(expires.Unix(), 10)
	return unix + "." + base64.RawURLEncoding.EncodeToString(a.setupMAC(unix))
}

func (a *Auth) setupMAC(unix string) []byte {
	m := hmac.New(sha256.New, a.token)
	m.Write([]byte("marquee first-run setup\x00" + unix))
	return m.Sum(nil)
}

// validSetup reports whether token is a setup token of this bootstrap
// token that has not expired at now.
func (a *Auth) validSetup(token string, now time.Time) bool {
	unix, mac, ok := strings.Cut(token, ".")
	if !ok {
		return false
	}
	sec, err := strconv.ParseInt(unix, 10, 64)
	if err != nil || !now.Before(time.Unix(sec, 0)) {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	return err == nil && hmac.Equal(got, a.setupMAC(unix))
}

// Setup makes the first owner from a setup token, an email and a
// password (already validated), and signs them in. A bad or expired
// token is throttled like a failed sign-in of ip; once a user exists it
// is a KindConflict error whatever the token.
func (a *Auth) Setup(ctx context.Context, st SetupStore, token, email, password, ip string, now time.Time) (SignedIn, error) {
	if len(a.token) == 0 {
		return SignedIn{}, errNoSetup
	}
	subjects := a.failureSubjects(ip, "")
	if err := checkThrottle(ctx, st, subjects, now, "too many failed set-up attempts; retry later"); err != nil {
		return SignedIn{}, err
	}
	if !a.validSetup(token, now) {
		if err := addFailure(ctx, st, subjects, now, marquee.AuditEntry{Actor: "anonymous", EntityID: "setup", Action: "login-failed", IP: ip}); err != nil {
			return SignedIn{}, err
		}
		return SignedIn{}, errBadSetup
	}
	hash, err := HashPassword(password)
	if err != nil {
		return SignedIn{}, err
	}
	actx := marquee.WithAudit(ctx, marquee.Audit{Actor: "setup", IP: ip, Action: "create", Fields: []string{"email", "role", "password"}})
	u, err := st.CreateFirstUser(actx, email, marquee.RoleOwner, hash)
	if err != nil {
		return SignedIn{}, err
	}
	return a.openSession(ctx, st, userPrincipal(&u), marquee.Session{UserID: u.ID}, ip, now)
}
