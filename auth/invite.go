package auth

import (
	"context"
	"crypto/subtle"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// Invitations (docs/api.md#invitations): a user made without a password
// gets a one-time link that sets one. Until then its stored password hash
// is an invitation mark — "invite:" + the SHA-256 of the link's secret +
// ":" + its expiry in Unix milliseconds — which no password matches
// (bcrypt refuses it), so the account cannot be signed in to. The link's
// token is "<user id>.<secret>": the id finds the user, the secret proves
// the link.

// InvitationTTL is how long an invitation's link sets a password.
const InvitationTTL = 7 * 24 * time.Hour

// invitePrefix begins an invitation's mark.
const invitePrefix = "invite:"

// NewInvitation returns an invitation's secret and the mark to store as
// the user's password hash, expiring at now + InvitationTTL.
func NewInvitation(now time.Time) (secret, mark string, expires time.Time) {
	secret, hash := NewSecret("")
	expires = now.Add(InvitationTTL).UTC()
	return secret, invitePrefix + hash + ":" + strconv.FormatInt(expires.UnixMilli(), 10), expires
}

// InvitationToken is the token of the link of user id's invitation.
func InvitationToken(id int64, secret string) string {
	return strconv.FormatInt(id, 10) + "." + secret
}

// Invited says whether a stored password hash is an invitation's mark.
func Invited(hash string) bool { return strings.HasPrefix(hash, invitePrefix) }

// InvitationStore is what accepting an invitation reads and writes.
type InvitationStore interface {
	LoginStore
	User(ctx context.Context, id int64) (marquee.User, error)
	UpdateUser(ctx context.Context, id int64, c marquee.UserChange) (marquee.User, error)
}

// errNoInvitation is the answer to any token that is not a live
// invitation (wrong, used, or its user removed): which, is not said.
var errNoInvitation = marquee.Errorf(marquee.KindNotFound, "no such invitation: it was used, or the link is wrong (ask for a new one)")

// AcceptInvitation sets the password of the user token's invitation
// names, once, and signs them in (as Setup does: the password was just
// set, not checked again): throttled and audited as sign-ins are (a wrong
// token counts against ip). An expired invitation is a KindGone error; a
// password against the rules a KindInvalid one naming "password".
func (a *Auth) AcceptInvitation(ctx context.Context, st InvitationStore, token, password, ip string, now time.Time) (SignedIn, error) {
	subjects := a.failureSubjects(ip, "")
	if err := checkThrottle(ctx, st, subjects, now, "too many wrong invitation links; retry later"); err != nil {
		return SignedIn{}, err
	}
	fail := func() (SignedIn, error) {
		if err := addFailure(ctx, st, subjects, now, marquee.AuditEntry{Actor: "anonymous", Action: "invitation-refused", IP: ip}); err != nil {
			return SignedIn{}, err
		}
		return SignedIn{}, errNoInvitation
	}
	idText, secret, ok := strings.Cut(token, ".")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || id <= 0 || secret == "" {
		return fail()
	}
	u, err := st.User(ctx, id)
	if marquee.KindOf(err) == marquee.KindNotFound {
		return fail()
	}
	if err != nil {
		return SignedIn{}, err
	}
	_, mark, err := st.UserLogin(ctx, u.Email)
	if err != nil && marquee.KindOf(err) != marquee.KindNotFound {
		return SignedIn{}, err
	}
	hash, expiry, ok := strings.Cut(strings.TrimPrefix(mark, invitePrefix), ":")
	ms, err := strconv.ParseInt(expiry, 10, 64)
	if !Invited(mark) || !ok || err != nil || subtle.ConstantTimeCompare([]byte(hash), []byte(HashSecret(secret))) != 1 {
		return fail()
	}
	if !now.Before(time.UnixMilli(ms)) {
		return SignedIn{}, marquee.Errorf(marquee.KindGone, "this invitation expired at %s: ask for a new one", time.UnixMilli(ms).UTC().Format(time.RFC3339))
	}
	if msg := marquee.CheckPassword(password, &u.Email); msg != "" {
		return SignedIn{}, marquee.Invalid("invalid invitation", marquee.Problems{"password": msg})
	}
	pw, err := HashPassword(password)
	if err != nil {
		return SignedIn{}, err
	}
	actx := marquee.WithAudit(ctx, marquee.Audit{Actor: userActor(&u), IP: ip, Action: "accept invitation", Fields: []string{"password"}})
	if u, err = st.UpdateUser(actx, id, marquee.UserChange{PasswordHash: &pw, IfPasswordHash: &mark}); err != nil {
		return SignedIn{}, err
	}
	return a.openSession(ctx, st, userPrincipal(&u), marquee.Session{UserID: u.ID}, ip, now)
}
