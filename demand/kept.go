package demand

import (
	"time"

	"github.com/maypok86/otter/v2"
)

// A winning bid's markup and billing notice are kept, by its decision's
// id, for the frame that draws it (/f/{token}) and the impression that
// bills it: on the instance that decided (docs/demand.md#one-instance).
const (
	keptFor    = time.Hour
	keptWeight = 256 << 20 // bytes of markup and notices kept at most
)

// Kept is what a winning bid leaves for its frame and its impression.
type Kept struct {
	Partner string
	Markup  string // its adm, macros filled
	BURL    string // its billing notice, macros filled ("" none)
	Width   int64
	Height  int64
}

func newKept() *otter.Cache[[16]byte, Kept] {
	return otter.Must(&otter.Options[[16]byte, Kept]{
		MaximumWeight:    keptWeight,
		Weigher:          func(_ [16]byte, k Kept) uint32 { return uint32(min(len(k.Markup)+len(k.BURL)+64, 1<<31)) },
		ExpiryCalculator: otter.ExpiryWriting[[16]byte, Kept](keptFor),
	})
}

// Keep keeps winning bid b's markup and billing notice under decision
// id.
func (x *Exchange) Keep(id [16]byte, b *Bid) {
	x.kept.Set(id, Kept{Partner: b.Partner, Markup: Macros(b.Raw.AdM, b, x.cfg.Currency, lossNotReported),
		BURL: Macros(b.Raw.BURL, b, x.cfg.Currency, lossNotReported), Width: b.Raw.W, Height: b.Raw.H})
}

// Markup is the markup kept under decision id (none on a nil Exchange).
func (x *Exchange) Markup(id [16]byte) (Kept, bool) {
	if x == nil {
		return Kept{}, false
	}
	return x.kept.GetIfPresent(id)
}

// Billed calls the billing notice kept under decision id, once: its
// impression was verified and billed.
func (x *Exchange) Billed(id [16]byte) {
	k, ok := x.kept.GetIfPresent(id)
	if !ok || k.BURL == "" {
		return
	}
	k2 := k
	k2.BURL = ""
	x.kept.Set(id, k2)
	x.Notify(k.Partner, k.BURL)
}
