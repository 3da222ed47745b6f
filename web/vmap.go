package web

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/serve"
	"marquee/vast"
)

// handleVMAP serves GET /vmap?placement=NAME&duration=SECONDS (public, as
// /vast is): the VMAP 1.0 document of a content video's ad breaks, by the
// placement's ad rules (adBreaks): pre-roll, mid-rolls and post-roll in
// the order they play, each filled by a GET /vast of the placement with
// its pod size (count) and the request's other parameters (a user key,
// consent, key-values), which the player asks when the break comes.
// duration, the content's length, drops the mid-rolls past its end and
// orders shares among times; without it, shares stay shares ("50%") for
// the player. A placement without ad breaks answers a VMAP without any.
func handleVMAP(svc *serve.Service, rq requester) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		anyOrigin(ctx) // players read it from the publisher's page
		args := ctx.QueryArgs()
		p := marquee.Problems{}
		name := string(args.Peek("placement"))
		if name == "" {
			p["placement"] = "is required"
		}
		var dur time.Duration
		if d := args.Peek("duration"); len(d) > 0 {
			secs, err := strconv.ParseFloat(string(d), 64)
			if err != nil || secs <= 0 || secs > 86_400 {
				p["duration"] = "must be the content's length in seconds, more than 0 and at most 86400"
			}
			dur = time.Duration(secs * float64(time.Second))
		}
		if !plainHost(ctx.Host()) {
			p["Host"] = "must be a host name, with a port or not"
		}
		if len(p) > 0 {
			return marquee.Invalid("invalid request", p)
		}
		pl, ok := svc.Engine().Plan().Placement(name)
		if !ok {
			return marquee.Invalid("invalid request", marquee.Problems{"placement": strconv.Quote(name) + " is no placement"})
		}
		pass := url.Values{}
		for k, v := range args.All() {
			if key := string(k); key != "placement" && key != "duration" && key != "count" && key != "podDurationMs" {
				pass.Add(key, string(v))
			}
		}
		origin := string(rq.appendOrigin(nil, ctx))
		breaks := placedBreaks(pl.AdBreaks, dur)
		out := make([]vast.Break, 0, len(breaks))
		mid := 0
		for _, b := range breaks {
			q := url.Values{"placement": {name}, "count": {strconv.Itoa(b.Ads)}}
			if b.MaxDurationMs > 0 {
				q.Set("podDurationMs", strconv.Itoa(b.MaxDurationMs))
			}
			for k, vs := range pass {
				q[k] = vs
			}
			vb := vast.Break{Offset: b.Offset, TagURL: origin + "/vast?" + q.Encode()}
			switch b.Offset {
			case "start":
				vb.ID = "preroll"
			case "end":
				vb.ID = "postroll"
			default:
				mid++
				vb.ID = "midroll-" + strconv.Itoa(mid)
				if at := b.At(0); at >= 0 { // a time: written as VMAP writes times
					vb.Offset = vast.VMAPTime(at)
				}
			}
			out = append(out, vb)
		}
		doc, err := vast.AppendVMAP(nil, out)
		if err != nil {
			return err
		}
		ctx.SetContentTypeBytes(contentTypeXML)
		noStore(ctx)
		ctx.SetBody(doc)
		return nil
	}
}

// placedBreaks is the breaks of a content of duration dur (0: unknown)
// in the order they play: the pre-roll first, the post-roll last, the
// mid-rolls by where they fall (shares among times only when dur is
// known; else in the placement's order); mid-rolls at or past the end of
// a known duration are dropped.
func placedBreaks(bs []marquee.AdBreak, dur time.Duration) []marquee.AdBreak {
	rank := func(b marquee.AdBreak) (int, time.Duration) {
		switch b.Offset {
		case "start":
			return 0, 0
		case "end":
			return 2, 0
		}
		return 1, b.At(dur)
	}
	out := make([]marquee.AdBreak, 0, len(bs))
	for _, b := range bs {
		if k, at := rank(b); k == 1 && dur > 0 && at >= dur {
			continue
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b marquee.AdBreak) int {
		ka, ta := rank(a)
		kb, tb := rank(b)
		if ka != kb {
			return ka - kb
		}
		if ta < 0 || tb < 0 { // a share of an unknown duration: as the placement lists it
			return 0
		}
		return int((ta - tb) / time.Millisecond)
	})
	return out
}
