package delivery

import (
	"fmt"

	"marquee"
)

// Remnant campaigns may compete on eCPM instead of weight (SetRemnant):
// then the eligible remnant campaign with the highest eCPM wins, and
// campaigns of equal eCPM share by weight. eCPM is what a thousand
// impressions of the campaign earn at its price: a CPM price is its
// eCPM; a CPC or CPA price is weighed by the campaign's click or
// conversion rate, from the reports (SetRates), smoothed toward a prior
// so that a new campaign neither wins nor loses everything on its first
// few impressions; a flat price, or none, earns 0 per impression.
const (
	// RemnantWeight draws remnant campaigns by weight, as every tier.
	RemnantWeight = "weight"
	// RemnantECPM gives remnant impressions to the highest eCPM.
	RemnantECPM = "ecpm"
)

// Priors of the rates, as if each campaign started with priorImpressions
// impressions at these rates: a CTR of 0.1%, a conversion rate of 0.01%.
const (
	priorImpressions = 1000
	priorCTR         = 0.001
	priorCVR         = 0.0001
)

// Rates are what a campaign delivered over its flight, from the reports:
// what its click and conversion rates are measured from.
type Rates struct {
	Impressions, Clicks, Conversions int64
}

// ecpm is campaign c's eCPM in millionths of the price's currency, at
// rates r.
func ecpm(c *Campaign, r Rates) int64 {
	if c.Price == nil {
		return 0
	}
	n := float64(r.Impressions + priorImpressions)
	switch c.Price.Model {
	case marquee.PriceCPM:
		return c.PriceMicros
	case marquee.PriceCPC:
		return int64(float64(c.PriceMicros) * 1000 * (float64(r.Clicks) + priorCTR*priorImpressions) / n)
	case marquee.PriceCPA:
		return int64(float64(c.PriceMicros) * 1000 * (float64(r.Conversions) + priorCVR*priorImpressions) / n)
	}
	return 0
}

// CheckRemnant says whether mode is how remnant campaigns may compete
// (RemnantWeight or RemnantECPM), and if not, what is wrong.
func CheckRemnant(mode string) error {
	if mode != RemnantWeight && mode != RemnantECPM {
		return fmt.Errorf("remnant campaigns compete by %q or %q, not %q", RemnantWeight, RemnantECPM, mode)
	}
	return nil
}

// SetRemnant sets how remnant campaigns compete: RemnantWeight (the
// default) or RemnantECPM; another mode is an error.
func (e *Engine) SetRemnant(mode string) error {
	if err := CheckRemnant(mode); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.remnantECPM = mode == RemnantECPM
	e.rebuild(e.plan.Load().campaigns)
	return nil
}

// SetRates replaces the campaigns' measured rates (for the eCPM of CPC
// and CPA prices).
func (e *Engine) SetRates(rates map[int64]Rates) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rates = rates
	if !e.remnantECPM {
		return
	}
	for id, c := range e.plan.Load().campaigns {
		if ecpm(c, rates[id]) != c.ECPM {
			e.rebuild(e.plan.Load().campaigns) // only when an eCPM moved: a rebuild indexes every ad
			return
		}
	}
}

// rebuild makes a new plan from campaigns (copied: a plan is never
// mutated) with their eCPMs at the current rates, and swaps it in. The
// caller holds e.mu.
func (e *Engine) rebuild(campaigns map[int64]*Campaign) {
	old := e.plan.Load()
	p := &Plan{campaigns: make(map[int64]*Campaign, len(campaigns)), placements: old.placements, ads: old.ads, defaults: old.defaults, remnantECPM: e.remnantECPM}
	for id, c := range campaigns {
		cp := *c
		cp.ECPM = ecpm(&cp, e.rates[id])
		p.campaigns[id] = &cp
	}
	p.index(old, true) // the same ads and placements
	e.plan.Store(p)
}

// RemnantByECPM reports whether p's remnant tier competes on eCPM.
func (p *Plan) RemnantByECPM() bool { return p.remnantECPM }

// byECPM reports whether tier t of p is drawn by eCPM.
func (p *Plan) byECPM(t int) bool {
	return p.remnantECPM && t >= 0 && t < len(marquee.Priorities) && marquee.Priorities[t] == marquee.PriorityRemnant
}

// NeedsRates reports whether c's eCPM depends on its measured rates: a
// remnant campaign priced by click or conversion, drawn by eCPM.
func (p *Plan) NeedsRates(c *Campaign) bool {
	return p.byECPM(c.Tier) && c.Price != nil && (c.Price.Model == marquee.PriceCPC || c.Price.Model == marquee.PriceCPA)
}
