package auth

import (
	"cmp"
	"context"
	"net/netip"
	"strconv"
	"time"

	"marquee"
)

// Throttling of failed logins: after MaxFailures failures of one account
// or from one IP within FailureWindow, sign-ins are refused (429) for a
// wait that starts at FirstWait after the last failure and doubles with
// each further failure, up to FailureWindow.
const (
	MaxFailures   = 5
	FailureWindow = 15 * time.Minute
	FirstWait     = 30 * time.Second
)

// LoginStore is what signing in needs of the store.
type LoginStore interface {
	UserLogin(ctx context.Context, email string) (marquee.User, string, error)
	CreateSession(ctx context.Context, s marquee.Session) error
	DeleteSession(ctx context.Context, hash string) error
	LoginFailures(ctx context.Context, subjects []string, since time.Time) ([]int, time.Time, error)
	AddLoginFailure(ctx context.Context, subjects []string, at, before time.Time) error
	ClearLoginFailures(ctx context.Context, subject string) error
	AddAudit(ctx context.Context, e marquee.AuditEntry) error
}

// Login is a sign-in request: an email and a password, or an API key.
type Login struct {
	Email, Password string
	Key             string
	IP              string
}

// SignedIn is an opened session: the cookie's secret (given to the
// client only), who it is, and when it ends at the latest.
type SignedIn struct {
	Cookie    string
	Principal Principal
	ExpiresAt time.Time
}

var (
	errBadLogin       = marquee.Errorf(marquee.KindUnauthorized, "invalid email, password or key")
	errBootstrapLogin = marquee.Errorf(marquee.KindUnauthorized, "this is the bootstrap admin token: it works with the API, not the console; "+
		"sign in as a user (open the setup link marquee serve printed, or run marquee users add)")
)

// SignIn checks a login and opens a session. A refused login gets the
// same answer, after the same work, whether or not the account exists;
// a throttled one gets KindTooManyRequests with when to retry. Every
// attempt is in the audit log (never the password).
func (a *Auth) SignIn(ctx context.Context, st LoginStore, in Login, now time.Time) (SignedIn, error) {
	subjects := a.failureSubjects(in.IP, in.Email)
	if err := checkThrottle(ctx, st, subjects, now, "too many failed sign-ins; retry later"); err != nil {
		return SignedIn{}, err
	}
	var se marquee.Session
	var p Principal
	var err error
	ok, bootstrap := false, false
	if in.Key != "" {
		if p, err = a.Bearer(ctx, []byte(in.Key), now); err == nil && p.KeyID != 0 {
			se.KeyID, ok = p.KeyID, true
		} else if err == nil {
			bootstrap = true // refused like any bad key, but its holder (the owner) is told what to do
		} else if marquee.KindOf(err) != marquee.KindUnauthorized {
			return SignedIn{}, err
		}
	} else {
		u, hash, err := st.UserLogin(ctx, in.Email)
		if err != nil && marquee.KindOf(err) != marquee.KindNotFound {
			return SignedIn{}, err
		}
		if CheckPassword(hash, in.Password) { // hash is "" for no such user: the same work, false
			p = userPrincipal(&u)
			se.UserID, ok = u.ID, true
		}
	}
	if !ok {
		// The audit names the account tried, or a key's visible prefix —
		// only of something shaped like a key: a mistyped password or the
		// bootstrap token pasted in the key field is not written down.
		attempted := "email:" + in.Email
		if in.Key != "" {
			attempted = "key"
			if wellFormedKey(in.Key) {
				attempted = "key:" + in.Key[:PrefixLen]
			}
		}
		if err := addFailure(ctx, st, subjects, now, marquee.AuditEntry{Actor: "anonymous", EntityID: attempted, Action: "login-failed", IP: in.IP}); err != nil {
			return SignedIn{}, err
		}
		if bootstrap {
			return SignedIn{}, errBootstrapLogin
		}
		return SignedIn{}, errBadLogin
	}
	if in.Email != "" {
		if err := st.ClearLoginFailures(ctx, "email:"+in.Email); err != nil {
			return SignedIn{}, err
		}
	}
	return a.openSession(ctx, st, p, se, in.IP, now)
}

// userPrincipal is who user u is when signed in: their role's scopes,
// and an advertiser's or a publisher's bounds.
func userPrincipal(u *marquee.User) Principal {
	scopes, _ := marquee.RoleScopes(u.Role)
	return Principal{Actor: userActor(u), Scopes: scopes, UserID: u.ID, Role: u.Role, Bounds: u.Bounds}
}

// openSession stores a new session of p (se names its user or key) and
// returns its cookie; the sign-in is in the audit log.
func (a *Auth) openSession(ctx context.Context, st LoginStore, p Principal, se marquee.Session, ip string, now time.Time) (SignedIn, error) {
	se.CreatedAt, se.SeenAt, se.ExpiresAt = now, now, now.Add(SessionMax)
	var cookie string
	cookie, se.Hash = NewSecret("")
	actx := marquee.WithAudit(ctx, marquee.Audit{Actor: p.Actor, IP: ip, Action: "login", EntityID: signedInAs(se.UserID, se.KeyID)})
	if err := st.CreateSession(actx, se); err != nil {
		return SignedIn{}, err
	}
	p.Session, p.CSRF = se.Hash, CSRFToken([]byte(cookie))
	return SignedIn{Cookie: cookie, Principal: p, ExpiresAt: se.ExpiresAt}, nil
}

// VerifyPassword checks that password is the current password of p, a
// user signed in with a password whose email is email, under the same
// throttle as sign-ins: a wrong password counts as a failed sign-in of
// the account and of ip, and after MaxFailures of them the check answers
// KindTooManyRequests without looking, so a stolen session cannot guess
// the password.
func (a *Auth) VerifyPassword(ctx context.Context, st LoginStore, p Principal, email, password, ip string, now time.Time) error {
	subjects := a.failureSubjects(ip, email)
	if err := checkThrottle(ctx, st, subjects, now, "too many wrong passwords; retry later"); err != nil {
		return err
	}
	_, hash, err := st.UserLogin(ctx, email)
	if err != nil {
		return err
	}
	if !CheckPassword(hash, password) {
		if err := addFailure(ctx, st, subjects, now, marquee.AuditEntry{Actor: p.Actor, EntityID: signedInAs(p.UserID, 0), Action: "password-check-failed", IP: ip}); err != nil {
			return err
		}
		return marquee.Invalid("invalid password change", marquee.Problems{"current": "is not your password"})
	}
	return st.ClearLoginFailures(ctx, "email:"+email)
}

// failureSubjects are what failed sign-ins count against: the client's
// address (an IPv6 address by its leading ClientBits: a /64 is one
// client, who has 2⁶⁴ addresses to rotate through), and the account when
// one is named.
func (a *Auth) failureSubjects(ip, email string) []string {
	if addr, err := netip.ParseAddr(ip); err == nil {
		if addr = addr.Unmap(); addr.Is6() {
			p, _ := addr.Prefix(cmp.Or(a.ClientBits, DefaultClientBits))
			ip = p.String()
		}
	}
	subjects := []string{"ip:" + ip}
	if email != "" {
		subjects = append(subjects, "email:"+email)
	}
	return subjects
}

// checkThrottle refuses (KindTooManyRequests, with when to retry) while
// any of subjects has MaxFailures failures in the window.
func checkThrottle(ctx context.Context, st LoginStore, subjects []string, now time.Time, msg string) error {
	counts, last, err := st.LoginFailures(ctx, subjects, now.Add(-FailureWindow))
	if err != nil {
		return err
	}
	if wait := throttled(counts, last, now); wait > 0 {
		return &marquee.Error{Kind: marquee.KindTooManyRequests, RetryAfter: wait, Message: msg}
	}
	return nil
}

// addFailure counts a failure against subjects and writes it to the
// audit log (e, at now, of the session entity).
func addFailure(ctx context.Context, st LoginStore, subjects []string, now time.Time, e marquee.AuditEntry) error {
	if err := st.AddLoginFailure(ctx, subjects, now, now.Add(-FailureWindow)); err != nil {
		return err
	}
	e.At, e.Entity = now, marquee.EntitySession
	return st.AddAudit(ctx, e)
}

// SignOut ends p's session.
func (a *Auth) SignOut(ctx context.Context, st LoginStore, p Principal, ip string) error {
	if p.Session == "" {
		return marquee.Errorf(marquee.KindInvalid, "not signed in with a session: nothing to sign out of")
	}
	err := st.DeleteSession(marquee.WithAudit(ctx, marquee.Audit{Actor: p.Actor, IP: ip, Action: "logout", EntityID: signedInAs(p.UserID, p.KeyID)}), p.Session)
	if err == nil {
		a.sessions.InvalidateAll()
	}
	return err
}

// signedInAs is how the audit log names what a session signs in as: its
// user, or the key it was opened with (never the session's hash).
func signedInAs(userID, keyID int64) string {
	if userID != 0 {
		return "user:" + strconv.FormatInt(userID, 10)
	}
	return "key:" + strconv.FormatInt(keyID, 10)
}

// throttled returns how long sign-ins must wait given the failures of
// each subject in the window and the last one's time; 0: not throttled.
func throttled(counts []int, last, now time.Time) time.Duration {
	n := 0
	for _, c := range counts {
		n = max(n, c)
	}
	if n < MaxFailures {
		return 0
	}
	wait := FirstWait << min(n-MaxFailures, 10)
	wait = min(wait, FailureWindow)
	return last.Add(wait).Sub(now)
}
