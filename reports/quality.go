package reports

import (
	"context"
	"maps"
	"slices"
	"time"

	"marquee"
	"marquee/reportrow"
)

// Qualities sums, for each site of bySite (its placements' ids, as
// marquee.SitePlacements gives them), the decisions' requests of its placements
// over [from, to), whole hours — in one read of the request rows. A site
// without placements had no traffic.
func (rp *Reporter) Qualities(ctx context.Context, bySite map[string][]int64, from, to time.Time) (map[string]marquee.SiteQuality, error) {
	out := make(map[string]marquee.SiteQuality, len(bySite))
	siteOf := map[int64]string{}
	for site, ids := range bySite {
		out[site] = marquee.SiteQuality{From: from.UTC(), To: to.UTC(), Invalid: map[string]int64{}}
		for _, id := range ids {
			siteOf[id] = site
		}
	}
	if len(siteOf) == 0 || !from.Before(to) {
		return out, nil
	}
	ids := slices.Sorted(maps.Keys(siteOf))
	sums, err := rp.r.RequestSums(ctx, reportrow.RequestQuery{From: from.Unix(), To: to.Unix(), Placements: ids, By: []string{"placement"}})
	if err != nil {
		return nil, err
	}
	for _, s := range sums {
		site, ok := siteOf[s.Placement]
		if !ok {
			continue
		}
		q := out[site]
		q.Requests += s.Requests()
		for i, n := range s.Invalid {
			if n > 0 {
				q.Invalid[reportrow.InvalidNames[i]] += n
				q.InvalidRequests += n
			}
		}
		out[site] = q
	}
	for site, q := range out {
		if all := q.Requests + q.InvalidRequests; all > 0 {
			q.InvalidRate = float64(q.InvalidRequests) / float64(all)
			out[site] = q
		}
	}
	return out, nil
}
