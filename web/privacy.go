package web

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/counters"
	"marquee/privacy"
	"marquee/serve"
)

// PrivacyStore is what erasure needs of the store.
type PrivacyStore interface {
	EraseSubject(ctx context.Context, pseudonyms []uint64) error
}

// Forgetter is what erasure needs of the frequency-cap counters.
type Forgetter interface {
	Forget(ctx context.Context, user uint64) (int, error)
}

// ErasureDays is how many days of a strict server's daily pseudonyms an
// erasure covers: as long as the counters keep a serve.
const ErasureDays = int(counters.Horizon / (24 * time.Hour))

const subjectsPrefix = "/api/v1/privacy/subjects/"

// Erasure is the answer to an erasure: what was removed, and what is kept
// and why.
type Erasure struct {
	// Subject is the stable name of the subject in the audit log: its
	// pseudonym of today, never its key.
	Subject string `json:"subject"`
	// Pseudonyms is how many pseudonyms were erased (strict: each day's).
	Pseudonyms int `json:"pseudonyms"`
	// Removed names what was deleted, with how much.
	Removed []Held `json:"removed"`
	// Kept names what cannot be deleted, and why.
	Kept []Held `json:"kept"`
}

// Held is data Marquee holds about a subject.
type Held struct {
	Data   string `json:"data"`
	Count  *int   `json:"count,omitempty"`
	Reason string `json:"reason"`
}

// handleEraseSubject serves DELETE /api/v1/privacy/subjects/{userKey}
// (the key percent-encoded as one path segment) and DELETE
// /api/v1/privacy/subjects?userKey=…:
// the subject's frequency-cap serves are forgotten here and, through the
// changelog, on every instance; the audit log records the erasure by the
// subject's pseudonym (docs/privacy.md#erasure); the route gives sctx the
// request's audit. The answer says what the policy and retention
// (-events-retention, 0: kept until deleted) keep.
func handleEraseSubject(st PrivacyStore, counters Forgetter, policy *privacy.Policy, retention time.Duration, wr *writer, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if st == nil || counters == nil {
			return marquee.Errorf(marquee.KindNotFound, "erasure is not configured on this server")
		}
		// The key from the raw request URI, percent-decoded once (the
		// path fasthttp normalises has "." and ".." segments and "//"
		// folded), or from ?userKey= (a key that starts with "../" cannot
		// be routed as a path segment at all).
		var k string
		if q := ctx.QueryArgs().Peek("userKey"); len(q) > 0 {
			k = string(q)
		} else {
			raw, _, _ := bytes.Cut(ctx.Request.Header.RequestURI(), []byte("?"))
			raw = raw[min(len(raw), max(0, bytes.Index(raw, []byte(subjectsPrefix)))+len(subjectsPrefix)):]
			var err error
			if k, err = url.PathUnescape(string(raw)); err != nil {
				return marquee.Invalid("invalid subject", marquee.Problems{"userKey": "must be percent-encoded (" + err.Error() + ")"})
			}
		}
		key := []byte(k)
		if len(key) == 0 || len(key) > serve.MaxUserKey {
			return marquee.Invalid("invalid subject", marquee.Problems{"userKey": fmt.Sprintf("must be 1-%d bytes", serve.MaxUserKey)})
		}
		names := policy.Subject(key, now(), ErasureDays)
		forgot := 0
		for _, p := range names {
			n, err := counters.Forget(sctx, p)
			if err != nil {
				return fmt.Errorf("erase subject: forget its serves: %w", err)
			}
			forgot += n
		}
		subject := string(privacy.AppendName(nil, names[0]))
		if a, ok := marquee.AuditFrom(sctx); ok {
			a.EntityID = subject
			sctx = marquee.WithAudit(sctx, a)
		}
		err := st.EraseSubject(sctx, names)
		if err := wr.visible(sctx, err, "erasure"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, Erasure{Subject: subject, Pseudonyms: len(names),
			Removed: []Held{{Data: "frequency-cap serves", Count: &forgot,
				Reason: "forgotten here (or in the shared Redis); every other instance forgets its own when it applies the erasure from the changelog"}},
			Kept: kept(policy, retention)})
		return nil
	}
}

// kept is what an erasure cannot remove, as the policy and the events'
// retention say.
func kept(policy *privacy.Policy, retention time.Duration) []Held {
	files := "event files keep the subject's events as written: "
	switch policy.Mode() {
	case privacy.Off:
		files += "with the user id as sent (privacy mode off)"
	case privacy.Strict:
		files += "under daily pseudonyms, which only this server's secret links to the key"
	default:
		files += "under a pseudonym, which only this server's secret links to the key"
	}
	if retention > 0 {
		files += fmt.Sprintf("; they are deleted %s after they were written (-events-retention)", retention)
	} else {
		files += "; they are kept until deleted (no -events-retention)"
	}
	return []Held{
		{Data: "event files", Reason: files},
		{Data: "reports", Reason: "counts and HyperLogLog reach sketches are aggregates: they hold no id to remove"},
	}
}
