package reports

import (
	"context"
	"time"

	"marquee/reportrow"
)

// Quality is a site's traffic over a range, people's and invalid
// (docs/api.md#site-quality): the slots its placements' decisions asked
// for — people's (Requests) and invalid traffic's by reason — and the
// invalid share of them all.
type Quality struct {
	From            time.Time        `json:"from"`
	To              time.Time        `json:"to"`
	Requests        int64            `json:"requests"`
	InvalidRequests int64            `json:"invalidRequests"`
	Invalid         map[string]int64 `json:"invalid"`
	InvalidRate     float64          `json:"invalidRate"`
}

// Quality sums the decisions' requests of placements (a site's: none is
// no traffic, never every placement's) over [from, to), whole hours.
func (rp *Reporter) Quality(ctx context.Context, placements []int64, from, to time.Time) (Quality, error) {
	q := Quality{From: from.UTC(), To: to.UTC(), Invalid: map[string]int64{}}
	if len(placements) == 0 || !from.Before(to) {
		return q, nil
	}
	sums, err := rp.r.RequestSums(ctx, reportrow.RequestQuery{From: from.Unix(), To: to.Unix(), Placements: placements, By: []string{"placement"}})
	if err != nil {
		return q, err
	}
	for _, s := range sums {
		q.Requests += s.Requests()
		for i, n := range s.Invalid {
			if n > 0 {
				q.Invalid[reportrow.InvalidNames[i]] += n
				q.InvalidRequests += n
			}
		}
	}
	if all := q.Requests + q.InvalidRequests; all > 0 {
		q.InvalidRate = float64(q.InvalidRequests) / float64(all)
	}
	return q, nil
}
