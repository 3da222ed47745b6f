package demand

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/maypok86/otter/v2"
)

// A winning bid's markup and billing notice are kept, by its decision's
// id, for the frame that draws it (/f/{token}) and the impression that
// bills it: in the memory of the instance that decided, and, with Shared
// (Redis, -counters redis://…), for every instance
// (docs/demand.md#across-instances).
const (
	keptFor    = time.Hour
	keptWeight = 256 << 20 // bytes of markup and notices kept at most
	// sharedTimeout bounds a call to the shared store: a decision waits
	// for its Keep.
	sharedTimeout = 100 * time.Millisecond
)

// Shared keeps values for every instance (counters.Redis).
type Shared interface {
	Keep(ctx context.Context, key string, v []byte, ttl time.Duration) error
	Fetch(ctx context.Context, key string) ([]byte, bool, error)
	TakeKept(ctx context.Context, key string) ([]byte, bool, error)
}

// Kept is what a winning bid leaves for its frame and its impression.
type Kept struct {
	Partner string `json:"p"`
	Markup  string `json:"m"`           // its adm, macros filled
	BURL    string `json:"b,omitempty"` // its billing notice, macros filled ("" none)
}

func newKept() *otter.Cache[[16]byte, Kept] {
	return otter.Must(&otter.Options[[16]byte, Kept]{
		MaximumWeight:    keptWeight,
		Weigher:          func(_ [16]byte, k Kept) uint32 { return uint32(min(len(k.Markup)+len(k.BURL)+64, 1<<31)) },
		ExpiryCalculator: otter.ExpiryWriting[[16]byte, Kept](keptFor),
	})
}

// Keep keeps winning bid b's markup and billing notice under decision
// id: here, and in the shared store when there is one (its markup and
// its notice apart: the notice is taken once by whichever instance counts
// the impression).
// It never derives from a request's context (fasthttp's RequestCtx races
// with its server's shutdown when used as one).
func (x *Exchange) Keep(id [16]byte, b *Bid) {
	k := Kept{Partner: b.Partner, Markup: Macros(b.Raw.AdM, b, x.cfg.Currency, lossNotReported),
		BURL: Macros(b.Raw.BURL, b, x.cfg.Currency, lossNotReported)}
	x.kept.Set(id, k)
	if x.cfg.Shared == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	key := hex.EncodeToString(id[:])
	burl := k.BURL
	k.BURL = ""
	v, _ := json.Marshal(k)
	if err := x.cfg.Shared.Keep(ctx, "m:"+key, v, keptFor); err != nil {
		x.cfg.Log.Warn("a partner's markup not shared: only this instance draws it", "partner", b.Partner, "err", err)
	}
	if burl != "" {
		if err := x.cfg.Shared.Keep(ctx, "b:"+key, []byte(b.Partner+"\n"+burl), keptFor); err != nil {
			x.cfg.Log.Warn("a partner's billing notice not shared: only this instance sends it", "partner", b.Partner, "err", err)
		}
	}
}

// Markup is the markup kept under decision id: this instance's, else
// the shared store's (none on a nil Exchange).
func (x *Exchange) Markup(id [16]byte) (Kept, bool) {
	if x == nil {
		return Kept{}, false
	}
	if k, ok := x.kept.GetIfPresent(id); ok {
		return k, true
	}
	if x.cfg.Shared == nil {
		return Kept{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, ok, err := x.cfg.Shared.Fetch(ctx, "m:"+hex.EncodeToString(id[:]))
	var k Kept
	if err != nil || !ok || json.Unmarshal(v, &k) != nil {
		return Kept{}, false
	}
	return k, true
}

// Billed sends the billing notice kept under decision id, once: its
// impression was verified and billed. With a shared store the notice is
// taken from it, so that one instance of the fleet sends it.
func (x *Exchange) Billed(id [16]byte) {
	k, here := x.kept.GetIfPresent(id)
	if here {
		x.kept.Set(id, Kept{Partner: k.Partner, Markup: k.Markup}) // sent once from here
	}
	if x.cfg.Shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		v, ok, err := x.cfg.Shared.TakeKept(ctx, "b:"+hex.EncodeToString(id[:]))
		if err != nil {
			x.cfg.Log.Warn("a partner's billing notice not taken", "err", err)
		}
		if !ok {
			return // another instance took it, or there is none
		}
		partner, burl, _ := cutLine(string(v))
		x.Notify(partner, burl)
		return
	}
	if here && k.BURL != "" {
		x.Notify(k.Partner, k.BURL)
	}
}

// cutLine cuts s at its first newline.
func cutLine(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
