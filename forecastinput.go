package marquee

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ForecastInput is a forecast asked for (docs/api.md#forecasts): a
// campaign's fields (a proposal; advertiserId and name may be left out),
// an existing campaign it stands for (ID: left out of the booked ones it
// contends with), and the placements it would fill (none: those of the
// campaign's ads, else every placement with recorded requests).
type ForecastInput struct {
	ID         int64
	Campaign   CampaignInput
	Placements []string
}

// MaxForecastFlight is the longest flight a forecast answers for (its
// cost grows with the flight's hours).
const MaxForecastFlight = 366 * 24 * time.Hour

// ParseForecastInput decodes and validates a forecast body at now: the
// campaign as a campaign body is checked (its problems under
// "campaign."), its flight not over and at most MaxForecastFlight long.
func ParseForecastInput(body []byte, now time.Time) (ForecastInput, error) {
	var in ForecastInput
	p := Problems{}
	fields, ok := object(body, p, "id", "campaign", "placements")
	if !ok {
		return in, Invalid("invalid forecast", p)
	}
	if raw, ok := present(fields, "id"); ok {
		if id, ok := ParseID(raw); ok {
			in.ID = id
		} else {
			p["id"] = "must be a campaign's id (a positive integer, as a string or a number)"
		}
	}
	if raw, ok := present(fields, "campaign"); !ok {
		p["campaign"] = "is required: the campaign's fields (targeting, flight, tier, goal or budget)"
	} else {
		c, err := ParseCampaignInput(raw)
		var e *Error
		if errors.As(err, &e) {
			for k, v := range e.Problems {
				if (k == "advertiserId" || k == "name") && v == "is required" {
					continue // a proposal need not name them
				}
				p["campaign."+k] = v
			}
		}
		in.Campaign = c
		if _, bad := p["campaign.endAt"]; !bad && !c.EndAt.IsZero() {
			switch {
			case !c.EndAt.After(now):
				p["campaign.endAt"] = "is in the past: a forecast is for a flight still to come"
			case c.EndAt.Sub(maxTime(c.StartAt, now)) > MaxForecastFlight:
				p["campaign.endAt"] = fmt.Sprintf("is more than %d days after the flight's start (or now): a forecast reaches at most that far", int(MaxForecastFlight.Hours()/24))
			}
		}
	}
	if raw, ok := present(fields, "placements"); ok {
		if json.Unmarshal(raw, &in.Placements) != nil || len(in.Placements) > 1000 {
			p["placements"] = "must be an array of placement names (at most 1,000)"
		}
		for _, name := range in.Placements {
			if name == "" || len(name) > MaxPlacementName {
				p["placements"] = fmt.Sprintf("must name placements (1 to %d bytes each)", MaxPlacementName)
			}
		}
	}
	return in, Invalid("invalid forecast", p)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
