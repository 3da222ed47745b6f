package marquee

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Kind is what kind of failure an error is. The HTTP edge maps each kind
// to one status code (web/errors.go); every other package only picks the
// kind.
type Kind uint8

// The kinds of failure. An error that is not an *Error is KindInternal.
const (
	KindInternal         Kind = iota // a fault of ours: logged, shown as "internal error"
	KindInvalid                      // input failed validation; Problems names every bad field
	KindNotFound                     // no such entity, or no such route
	KindConflict                     // clashes with what is stored (a taken code, a link only its ad may change)
	KindUnauthorized                 // no credential, or a wrong one
	KindForbidden                    // a credential without the right to do this
	KindUnavailable                  // cannot be done now (store down, spool full): the client is told to retry later
	KindTooLarge                     // a body or a batch over its limit
	KindUnsupportedMedia             // a body of a type the route does not read
	KindGone                         // existed, and no longer answers (an expired link)
	KindMethodNotAllowed             // the route exists, not with this method
	KindHeadersTooLarge              // the request line and headers are over their limit
	KindTooManyRequests              // throttled (failed logins): retry after Error.RetryAfter
	KindTimeout                      // the client did not send its request in time
	KindStorageFull                  // the store's disk is full: writes wait for space (a 503, like KindUnavailable)
)

var kindNames = [...]string{"internal", "invalid", "not found", "conflict", "unauthorized", "forbidden",
	"unavailable", "too large", "unsupported media type", "gone", "method not allowed", "headers too large", "too many requests", "timeout", "storage full"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Error is a failure a client may be told about: its kind, the message
// the client sees, and (for KindInvalid) every bad field. Err, when set,
// is the cause: it is logged, and never shown to a client.
type Error struct {
	Kind     Kind
	Message  string   // what the client reads: lower-case, no trailing punctuation
	Problems Problems // KindInvalid: field path → what is wrong there
	Missing  Scope    // KindForbidden: the scope the credential lacks
	// RetryAfter is when to retry (KindTooManyRequests, KindUnavailable);
	// zero gives the default.
	RetryAfter time.Duration
	Err        error
}

// Errorf returns an error of kind k whose client message is the
// formatted text.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Unavailable returns the error of a store that cannot be reached: a
// client is told to retry later, and cause is logged.
func Unavailable(cause error) *Error {
	return &Error{Kind: KindUnavailable, Message: "store unavailable", Err: cause}
}

// StorageFull returns the error of a store whose disk is full: writes
// are refused (503) until space returns, and nothing stored is harmed;
// cause is logged.
func StorageFull(cause error) *Error {
	return &Error{Kind: KindStorageFull, Message: "storage full: the database's disk has no space for this write", RetryAfter: 5 * time.Second, Err: cause}
}

// IsStorageFull reports whether err is a StorageFull error.
func IsStorageFull(err error) bool {
	return KindOf(err) == KindStorageFull
}

// Invalid returns the KindInvalid error of input named what ("invalid
// ad", "invalid query") with problems, or nil when problems is empty.
func Invalid(what string, problems Problems) error {
	if len(problems) == 0 {
		return nil
	}
	return &Error{Kind: KindInvalid, Message: what, Problems: problems}
}

// Error is the message, then the problems in field order, then the cause.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	keys := make([]string, 0, len(e.Problems))
	for k := range e.Problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(e.Problems[k])
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain, or nil if there is none.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// KindOf returns the kind of the first *Error in err's chain; an error
// with none is KindInternal.
func KindOf(err error) Kind {
	if e := AsError(err); e != nil {
		return e.Kind
	}
	return KindInternal
}

// Problems maps a field path, such as "conditions[0].country[1]", to what is
// wrong with the value found there.
type Problems map[string]string
