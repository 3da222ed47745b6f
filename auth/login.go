package auth

import (
	"context"
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

var errBadLogin = marquee.Errorf(marquee.KindUnauthorized, "invalid email, password or key")

// SignIn checks a login and opens a session. A refused login gets the
// same answer, after the same work, whether or not the account exists;
// a throttled one gets KindTooManyRequests with when to retry. Every
// attempt is in the audit log (never the password).
func (a *Auth) SignIn(ctx context.Context, st LoginStore, in Login, now time.Time) (SignedIn, error) {
	subjects := []string{"ip:" + in.IP}
	if in.Email != "" {
		subjects = append(subjects, "email:"+in.Email)
	}
	counts, last, err := st.LoginFailures(ctx, subjects, now.Add(-FailureWindow))
	if err != nil {
		return SignedIn{}, err
	}
	if wait := throttled(counts, last, now); wait > 0 {
		return SignedIn{}, &marquee.Error{Kind: marquee.KindTooManyRequests, RetryAfter: wait,
			Message: "too many failed sign-ins; retry later"}
	}
	se := marquee.Session{CreatedAt: now, SeenAt: now, ExpiresAt: now.Add(SessionMax)}
	var p Principal
	ok := false
	if in.Key != "" {
		if p, err = a.Bearer(ctx, []byte(in.Key), now); err == nil && p.KeyID != 0 {
			se.KeyID, ok = p.KeyID, true
		} else if err != nil && marquee.KindOf(err) != marquee.KindUnauthorized {
			return SignedIn{}, err
		}
	} else {
		u, hash, err := st.UserLogin(ctx, in.Email)
		if err != nil && marquee.KindOf(err) != marquee.KindNotFound {
			return SignedIn{}, err
		}
		if CheckPassword(hash, in.Password) { // hash is "" for no such user: the same work, false
			scopes, _ := marquee.RoleScopes(u.Role)
			p = Principal{Actor: userActor(&u), Scopes: scopes, UserID: u.ID, Role: u.Role}
			se.UserID, ok = u.ID, true
		}
	}
	if !ok {
		attempted := "email:" + in.Email
		if in.Key != "" {
			attempted = "key:" + in.Key[:min(PrefixLen, len(in.Key))]
		}
		if err := st.AddLoginFailure(ctx, subjects, now, now.Add(-FailureWindow)); err != nil {
			return SignedIn{}, err
		}
		if err := st.AddAudit(ctx, marquee.AuditEntry{At: now, Actor: "anonymous", Entity: marquee.EntitySession,
			EntityID: attempted, Action: "login-failed", IP: in.IP}); err != nil {
			return SignedIn{}, err
		}
		return SignedIn{}, errBadLogin
	}
	var cookie string
	cookie, se.Hash = NewSecret("")
	actx := marquee.WithAudit(ctx, marquee.Audit{Actor: p.Actor, IP: in.IP, Action: "login", EntityID: signedInAs(se.UserID, se.KeyID)})
	if err := st.CreateSession(actx, se); err != nil {
		return SignedIn{}, err
	}
	if in.Email != "" {
		if err := st.ClearLoginFailures(ctx, "email:"+in.Email); err != nil {
			return SignedIn{}, err
		}
	}
	p.Session, p.CSRF = se.Hash, CSRFToken([]byte(cookie))
	return SignedIn{Cookie: cookie, Principal: p, ExpiresAt: se.ExpiresAt}, nil
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
