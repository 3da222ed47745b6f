package marquee

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Conversions (docs/api.md#conversions): an advertiser's page (a pixel)
// or server (a postback) says a user converted, with the click id
// Marquee gave the click that brought them, or the user's key; Marquee
// attributes it to the last click within the campaign's post-click
// window or, failing that, to the user's last viewable impression (else
// impression) within its post-view window, and counts it once per order.

// Attributions of a conversion: to a click (post-click) or to an
// impression (post-view).
const (
	AttributedClick = "click"
	AttributedView  = "view"
)

// MaxOrderID is the longest order id, in bytes.
const MaxOrderID = 128

// ConversionInput is what a pixel or a postback says of a conversion.
type ConversionInput struct {
	ClickID  string `json:"clickId"`
	UserKey  string `json:"userKey"`
	OrderID  string `json:"orderId"`
	Value    Micros `json:"value"`
	Currency string `json:"currency"`
	// Advertiser is whose conversion it is: required without a click id
	// (a click id says it).
	Advertiser int64 `json:"advertiserId"`
	// Consent is a postback's word on the user's consent to be followed
	// (nil: given — the advertiser's server answers for the consent its
	// site collected); false: the user key is not used.
	Consent *bool `json:"consent,omitempty"`
}

// ParseConversionInput decodes and validates a postback's JSON body.
func ParseConversionInput(body []byte) (ConversionInput, error) {
	var in ConversionInput
	p := Problems{}
	fields, ok := object(body, p, "clickId", "userKey", "orderId", "value", "currency", "advertiserId", "consent")
	if !ok {
		return in, Invalid("invalid conversion", p)
	}
	str := func(key string, max int) string {
		raw, ok := present(fields, key)
		if !ok {
			return ""
		}
		var s string
		if json.Unmarshal(raw, &s) != nil || len(s) > max || !utf8.ValidString(s) || s == "" {
			p[key] = fmt.Sprintf("must be a string of 1 to %d bytes", max)
		}
		return s
	}
	in.ClickID, in.UserKey, in.OrderID = str("clickId", 512), str("userKey", 256), str("orderId", MaxOrderID)
	if raw, ok := present(fields, "value"); ok {
		v, err := ParseAmount(raw)
		if err != nil {
			p["value"] = err.Error()
		}
		in.Value = v
	}
	in.Currency = currencyField(fields, "currency", p)
	if raw, ok := present(fields, "consent"); ok {
		var c bool
		if json.Unmarshal(raw, &c) != nil {
			p["consent"] = "must be true or false"
		}
		in.Consent = &c
	}
	if raw, ok := present(fields, "advertiserId"); ok {
		if id, ok := ParseID(raw); ok {
			in.Advertiser = id
		} else {
			p["advertiserId"] = "must be an advertiser's id (a positive integer, as a string or a number)"
		}
	}
	return in, Invalid("invalid conversion", in.Check(p))
}

// Check names what is missing from in (a pixel's query, once read) in p,
// and returns p.
func (in *ConversionInput) Check(p Problems) Problems {
	if in.ClickID == "" && in.UserKey == "" {
		if _, bad := p["clickId"]; !bad {
			p["clickId"] = "is required without a userKey: a conversion is attributed to a click id or to a user's impression"
		}
	}
	if in.ClickID == "" && in.Advertiser == 0 {
		if _, bad := p["advertiserId"]; !bad {
			p["advertiserId"] = "is required without a clickId"
		}
	}
	return p
}

// Conversion is a conversion counted: its advertiser and the key it
// counts once under ("order:" and the order id; without one, "click:" or
// "view:" and the decision converted), what it was attributed to, its
// value and when.
type Conversion struct {
	Advertiser  int64
	Dedupe      string
	Campaign    int64
	Ad          int64
	Attribution string
	Value       Micros
	At          time.Time
}
