package web

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
	"marquee/forecast"
)

// Forecasts (docs/api.md#forecasts): a proposed campaign's availability
// and contention, and the booked campaigns' delivery risk, from the
// requests counted and sampled (package forecast).

// ForecastStore is what forecasts read of the store.
type ForecastStore = forecast.Source

// forecasts answers forecasts from an inventory read at most once a
// minute (its model reads whole hours; samples arrive hourly).
type forecasts struct {
	src    ForecastStore
	engine *delivery.Engine
	model  forecast.Model

	mu  sync.Mutex
	inv *forecast.Inventory
	at  time.Time
}

// inventoryTTL is how long an inventory read serves.
const inventoryTTL = time.Minute

// inventory is the inventory as of now (read again once inventoryTTL
// old).
func (f *forecasts) inventory(ctx context.Context, plan *delivery.Plan, now time.Time) (*forecast.Inventory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inv != nil && now.Sub(f.at) < inventoryTTL && now.Sub(f.at) >= 0 {
		return f.inv, nil
	}
	names := plan.PlacementNames()
	declared := map[string]float64{}
	for _, name := range names {
		if pl, ok := plan.Placement(name); ok && pl.ExpectedDailyRequests > 0 {
			declared[name] = float64(pl.ExpectedDailyRequests)
		}
	}
	inv, err := forecast.Load(ctx, f.src, names, declared, now, f.model)
	if err != nil {
		return nil, err
	}
	f.inv, f.at = inv, now
	return inv, nil
}

// point is a forecast's figure as the API writes it: whole decisions.
type point struct {
	Mean int64 `json:"mean"`
	Low  int64 `json:"low"`
	High int64 `json:"high"`
}

func pointOf(p forecast.Point) point {
	return point{Mean: int64(math.Round(p.Mean)), Low: int64(math.Round(p.Low)), High: int64(math.Round(p.High))}
}

// forecastAnswer is POST /api/v1/forecasts's answer.
type forecastAnswer struct {
	From       string               `json:"from"`
	To         string               `json:"to"`
	Placements []string             `json:"placements"`
	Matching   point                `json:"matching"`
	Available  point                `json:"available"`
	Delivery   point                `json:"delivery"`
	Unsold     point                `json:"unsold"`
	Goal       int64                `json:"goal"`
	Fits       string               `json:"fits"`
	Reason     string               `json:"reason,omitempty"`
	Tiers      []tierTake           `json:"tiers"`
	Contending []forecast.Contender `json:"contending"`
	TakesFrom  []forecast.Loss      `json:"takesFrom"`
	Notes      []string             `json:"notes"`
	Model      map[string]any       `json:"model"`
	// Confidence is "low" (ConfidenceReason says why) or "normal".
	Confidence       string `json:"confidence"`
	ConfidenceReason string `json:"confidenceReason,omitempty"`
}

type tierTake struct {
	Priority string `json:"priority"`
	Takes    int64  `json:"takes"`
}

// handleForecast serves POST /api/v1/forecasts: {"campaign": {…a
// campaign's fields…}, "id", "placements"}. 200 with the forecast; 400
// naming the problem fields (a flight over, a placement that does not
// exist).
func handleForecast(f *forecasts, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		at := now()
		in, err := readJSON(ctx, MaxCampaignBody, func(b []byte) (marquee.ForecastInput, error) { return marquee.ParseForecastInput(b, at) })
		if err != nil {
			return err
		}
		plan := f.engine.Plan()
		for i, name := range in.Placements {
			if _, ok := plan.Placement(name); !ok {
				return marquee.Invalid("invalid forecast", marquee.Problems{fmt.Sprintf("placements[%d]", i): "no such placement"})
			}
		}
		placements := in.Placements
		if len(placements) == 0 && in.ID != 0 {
			placements = plan.Placed()[in.ID]
		}
		inv, err := f.inventory(sctx, plan, at)
		if err != nil {
			return err
		}
		var ecpm int64
		if p := in.Campaign.Price; p != nil && p.Model == marquee.PriceCPM {
			ecpm = int64(p.Amount)
		}
		res := forecast.Forecast(inv, forecast.Booked(plan, f.engine.Pacing(), f.engine.Budgets(), at),
			forecast.Query{ID: in.ID, Campaign: in.Campaign, Placements: placements, Now: at, RemnantByECPM: plan.RemnantByECPM(), ECPM: ecpm})
		out := forecastAnswer{From: marquee.FormatTime(res.From), To: marquee.FormatTime(res.To), Placements: res.Placements,
			Matching: pointOf(res.Matching), Available: pointOf(res.Available), Delivery: pointOf(res.Delivery), Unsold: pointOf(res.Unsold),
			Goal: int64(math.Round(res.Goal)), Fits: res.Fits, Reason: res.Reason, Contending: res.Contending, TakesFrom: res.TakesFrom, Notes: res.Notes,
			Confidence: res.Confidence, ConfidenceReason: res.Why,
			Model: map[string]any{"weeks": f.model.Weeks, "samples": len(inv.Samples), "placements": len(inv.Hourly)}}
		// Lists are never null: the console maps them.
		out.Tiers, out.Placements = []tierTake{}, append([]string{}, out.Placements...)
		out.Contending, out.TakesFrom, out.Notes = append([]forecast.Contender{}, out.Contending...), append([]forecast.Loss{}, out.TakesFrom...), append([]string{}, out.Notes...)
		for _, t := range res.Tiers {
			out.Tiers = append(out.Tiers, tierTake{Priority: t.Priority, Takes: int64(math.Round(t.Takes))})
		}
		for i := range out.Contending {
			c := &out.Contending[i]
			c.Shared, c.Takes = math.Round(c.Shared), math.Round(c.Takes)
		}
		for i := range out.TakesFrom {
			l := &out.TakesFrom[i]
			l.Without, l.With = math.Round(l.Without), math.Round(l.With)
		}
		writeJSON(ctx, fasthttp.StatusOK, out)
		return nil
	}
}

// riskAnswer is a campaign's delivery risk as the API writes it.
type riskAnswer struct {
	ID        int64  `json:"id,string"`
	Name      string `json:"name"`
	Priority  string `json:"priority"`
	Target    int64  `json:"target"`
	Delivered int64  `json:"delivered"`
	Forecast  point  `json:"forecast"`
	Expected  int64  `json:"expected"`
	AtRisk    bool   `json:"atRisk"`
	// TargetFrom is "goal" or "budget" (what is left ÷ its CPM × 1,000).
	TargetFrom string `json:"targetFrom"`
	// Unknown: nothing is known of its placements' requests (no
	// history, none declared): never at risk, its forecast 0.
	Unknown          bool   `json:"unknown"`
	Confidence       string `json:"confidence"`
	ConfidenceReason string `json:"confidenceReason,omitempty"`
}

// handleDeliveryRisk serves GET /api/v1/forecasts/risk[?campaign=ID]:
// each active campaign with a goal or budget, its forecast delivery over
// the rest of its flight as the booked campaigns contend, most at risk
// first.
func handleDeliveryRisk(f *forecasts, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		var only int64
		if raw := ctx.QueryArgs().Peek("campaign"); len(raw) > 0 {
			id, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil || id <= 0 {
				return marquee.Invalid("invalid risk query", marquee.Problems{"campaign": "must be a campaign's id"})
			}
			only = id
		}
		at := now()
		plan := f.engine.Plan()
		inv, err := f.inventory(sctx, plan, at)
		if err != nil {
			return err
		}
		out := []riskAnswer{}
		for _, r := range forecast.RiskOf(inv, forecast.Booked(plan, f.engine.Pacing(), f.engine.Budgets(), at), at, plan.RemnantByECPM(), marquee.Priorities) {
			if only != 0 && r.ID != only {
				continue
			}
			out = append(out, riskAnswer{ID: r.ID, Name: r.Name, Priority: r.Priority, Target: int64(math.Round(r.Target)), Delivered: int64(math.Round(r.Delivered)),
				Forecast: pointOf(r.Forecast), Expected: int64(math.Round(r.Expected)), AtRisk: r.AtRisk,
				TargetFrom: r.TargetFrom, Unknown: r.Unknown, Confidence: r.Confidence, ConfidenceReason: r.Why})
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"at": marquee.FormatTime(at), "campaigns": out})
		return nil
	}
}
