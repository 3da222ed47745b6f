// Conversions: the advertiser's pixel (GET /conversion) and postback
// (POST /api/v1/conversions), attributed to the click or the impression
// that earned them and counted once per order (docs/api.md#conversions).

package web

import (
	"context"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/privacy"
	"marquee/serve"
	"marquee/tracking"
)

// MaxConversionBody bounds a postback's body.
const MaxConversionBody = 4 << 10

// handleConversionPost serves POST /api/v1/conversions: a server's
// postback. A key bound to advertisers converts only theirs.
func handleConversionPost(svc *serve.Service, rq requester) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxConversionBody, marquee.ParseConversionInput)
		if err != nil {
			return err
		}
		given := privacy.Yes // the advertiser's server answers for its site's consent
		if in.Consent != nil && !*in.Consent {
			given = privacy.No
		}
		pv := svc.Privacy().Decide(privacy.Signal{GDPR: -1, Given: given, GPC: sentGPC(ctx)})
		e := rq.edge(ctx, nil)
		out, err := svc.Convert(sctx, &e, &in, serve.Voucher{Postback: true}, boundsOf(ctx), pv)
		if err != nil {
			return err
		}
		status := fasthttp.StatusAccepted // not attributed
		switch {
		case out.Counted:
			status = fasthttp.StatusCreated
		case out.Duplicate:
			status = fasthttp.StatusOK
		}
		writeJSON(ctx, status, converted(out))
		return nil
	}
}

// converted is a conversion's answer as the API writes it
// (docs/api.md#conversions).
type converted struct {
	Counted     bool   `json:"counted"`
	Duplicate   bool   `json:"duplicate,omitempty"`
	Attribution string `json:"attribution,omitempty"`
	Reason      string `json:"reason,omitempty"`
	AdID        int64  `json:"adId,omitempty,string"`
	CampaignID  int64  `json:"campaignId,omitempty,string"`
	Verified    bool   `json:"verified"`
	IVT         string `json:"ivt,omitempty"`
}

// handleConversionPixel serves GET /conversion?clickId=…: the pixel on
// the advertiser's page. It answers a 1×1 GIF (or 204) once counted, and
// an error as any route does.
func handleConversionPixel(svc *serve.Service, rq requester) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		args := ctx.QueryArgs()
		p := marquee.Problems{}
		in := marquee.ConversionInput{ClickID: string(args.Peek("clickId")), UserKey: string(args.Peek("userKey")), OrderID: string(args.Peek("orderId"))}
		if len(in.OrderID) > marquee.MaxOrderID {
			p["orderId"] = "must be at most " + strconv.Itoa(marquee.MaxOrderID) + " bytes"
		}
		if v := args.Peek("value"); len(v) > 0 {
			m, err := marquee.ParseMicros(string(v))
			if err != nil {
				p["value"] = err.Error()
			}
			in.Value = m
		}
		if c := args.Peek("currency"); len(c) > 0 {
			in.Currency = string(c)
		}
		if a := args.Peek("advertiserId"); len(a) > 0 {
			id, err := strconv.ParseInt(string(a), 10, 64)
			if err != nil || id <= 0 {
				p["advertiserId"] = "must be an advertiser's id (a positive integer)"
			}
			in.Advertiser = id
		}
		if err := marquee.Invalid("invalid conversion", in.Check(p)); err != nil {
			return err
		}
		gdpr := int8(-1)
		switch string(args.Peek("gdpr")) {
		case "0":
			gdpr = 0
		case "1":
			gdpr = 1
		}
		pv := svc.Privacy().Decide(privacy.Signal{GPC: sentGPC(ctx), GDPR: gdpr, TCF: args.Peek("gdpr_consent"),
			GPP: args.Peek("gpp"), GPPSID: args.Peek("gpp_sid"), USP: args.Peek("us_privacy")})
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e := rq.edge(ctx, nil)
		if _, err := svc.Convert(sctx, &e, &in, serve.Voucher{Sig: args.Peek("sig"), Value: args.Peek("value")}, marquee.Bounds{}, pv); err != nil {
			return err
		}
		answerPixel(ctx)
		return nil
	}
}

// conversionSecret is an advertiser's new conversion secret, shown only
// in the answer that made it.
type conversionSecret struct {
	AdvertiserID int64  `json:"advertiserId,string"`
	Secret       string `json:"secret"`
}

// handleConversionSecret serves POST
// /api/v1/advertisers/{id}/conversion-secret: a new conversion secret for
// the advertiser — what its server signs conversion pixels with — shown
// in this answer only; pixels signed with the one before stop verifying
// (docs/api.md#conversions).
func handleConversionSecret(st CampaignStore, svc *serve.Service, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		nonce := tracking.NewNonce()
		if err := wr.visible(sctx, st.SetConversionNonce(sctx, id, nonce), "advertiser"); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusCreated, conversionSecret{AdvertiserID: id, Secret: svc.ConversionSecret(nonce)})
		return nil
	}
}
