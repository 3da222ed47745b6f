package reports

import (
	"context"

	"marquee/reportrow"
)

// ckey is an ad's events of one UTC day in one placement at one grain of
// the cube (reportrow.CubeRow), as counted before the flush resolves the
// placement's name.
type ckey struct {
	grain        uint8 // grainGeo or grainKV as counted; grainEntity and grainCP at the flush
	day          int64
	ad, campaign int64
	placement    string
	country      [2]byte
	device       string
	bot          uint8 // an ivt.Reason (0: a person's)
	key, value   string
}

// The cube's grains, as a ckey holds them.
const (
	grainEntity = iota
	grainCP
	grainGeo
	grainKV
)

var grainNames = [...]string{reportrow.GrainEntity, reportrow.GrainCP, reportrow.GrainGeo, reportrow.GrainKV}

// addCube counts an event (c) of ad, campaign and placement (each
// optional, not all absent) on day in the cube's geo grain: one map entry
// an event; the flush sums the entity and campaign × placement grains
// from it (resolveCube). t.mu is held.
func (t *Tally) addCube(k ckey, c *Counts) {
	k.grain = grainGeo
	addTo(t.cube, k, c)
}

// resolveCube adds the pending cube rows to b: placements by id, and
// what names an unknown ad, campaign or placement dropped (it is counted
// as dropped with the event's rows).
func resolveCube(ctx context.Context, p pending, b *Batch, known func(entity byte, id int64, code string) (found, error)) error {
	at := map[reportrow.CubeRow]int{} // by key: counts zero
	cube := make(map[ckey]*Counts, 3*len(p.cube))
	for k, c := range p.cube {
		addTo(cube, k, c)
		if k.grain != grainGeo {
			continue
		}
		// The coarser grains, summed from the geo grain's rows.
		e := k
		e.grain, e.country, e.device = grainEntity, [2]byte{}, ""
		addTo(cube, e, c)
		e.grain, e.ad = grainCP, 0
		addTo(cube, e, c)
	}
	for k, c := range cube {
		r := reportrow.CubeRow{Grain: grainNames[k.grain], Day: k.day, Ad: k.ad, Campaign: k.campaign, IVT: k.bot, Key: k.key, Value: k.value}
		if k.grain == grainGeo {
			r.Country, r.Device = string(k.country[:]), k.device
		}
		ok := true
		for _, e := range [...]struct {
			entity byte
			id     int64
			code   string
		}{{entAd, k.ad, ""}, {entCampaign, k.campaign, ""}, {entPlacement, 0, k.placement}} {
			if e.id == 0 && e.code == "" {
				continue
			}
			f, err := known(e.entity, e.id, e.code)
			if err != nil {
				return err
			}
			ok = ok && f.ok
			if e.entity == entPlacement {
				r.Placement = f.id
			}
		}
		if !ok {
			continue
		}
		if i, seen := at[r]; seen {
			b.Cube[i].Counts.Add(*c)
			continue
		}
		at[r] = len(b.Cube)
		r.Counts = *c
		b.Cube = append(b.Cube, r)
	}
	return nil
}
