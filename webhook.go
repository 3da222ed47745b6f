package marquee

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Webhook event kinds: what a webhook can ask for (events of these types).
// WebhookSiteQuality is the network's, not an event line's: a site's
// hour of invalid traffic past the alarm (docs/ivt.md#site-quality),
// sent to webhooks without a target.
var WebhookEvents = []string{"click", "conversion", "impression", WebhookSiteQuality}

// WebhookSiteQuality is the webhook event of a site's quality alarm.
const WebhookSiteQuality = "site.quality"

// WebhookInput is what a client sets of a webhook: where events are POSTed,
// which types, and for what — one link (by code), one ad or one campaign,
// or everything when none is set — and whether events the server does not
// vouch for come too (Unverified: beacons naming an ad or a campaign, a
// click whose impression did not count; by default only a decision's
// verified events and a redirect's clicks).
type WebhookInput struct {
	URL        string   `json:"url"`
	Events     []string `json:"events"`
	Link       string   `json:"link,omitempty"`
	AdID       int64    `json:"adId,omitempty"`
	CampaignID int64    `json:"campaignId,omitempty"`
	Unverified bool     `json:"unverified"`
}

// Webhook states.
const (
	WebhookActive   = "active"
	WebhookDisabled = "disabled"
)

// Webhook is a stored webhook. Its signing secret is never stored: it is
// derived from Nonce and a key of the server's (shown once, at creation).
type Webhook struct {
	ID int64 `json:"id"`
	WebhookInput
	State          string    `json:"state"`
	DisabledReason string    `json:"disabledReason,omitempty"`
	Nonce          string    `json:"-"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// WebhookDelivery is one attempt to deliver a batch of events to a
// webhook: when, the answer's status (0: no answer, Error says why), how
// long it took, which attempt of the batch it was and how many events it
// carried.
type WebhookDelivery struct {
	WebhookID int64     `json:"webhookId"`
	MessageID string    `json:"messageId"`
	At        time.Time `json:"at"`
	Status    int       `json:"status"`
	LatencyMS int64     `json:"latencyMs"`
	Attempt   int       `json:"attempt"`
	Events    int       `json:"events"`
	Error     string    `json:"error,omitempty"`
}

// Check returns in's problems, by field: the URL https (or http when
// allowHTTP), the events known and not repeated, at most one target.
func (in WebhookInput) Check(allowHTTP bool) Problems {
	p := Problems{}
	if msg := CheckURL(in.URL); msg != "" {
		p["url"] = msg
	} else if u, _ := url.Parse(in.URL); u.Scheme != "https" && !allowHTTP {
		p["url"] = "must be https (http only where the server allows it: -webhooks-allow-http)"
	}
	if len(in.Events) == 0 {
		p["events"] = "is required: one or more of " + strings.Join(WebhookEvents, ", ")
	}
	for i, e := range in.Events {
		switch {
		case !slices.Contains(WebhookEvents, e):
			p[fmt.Sprintf("events[%d]", i)] = fmt.Sprintf("unknown event %q: want one of %s", e, strings.Join(WebhookEvents, ", "))
		case slices.Index(in.Events, e) < i:
			p[fmt.Sprintf("events[%d]", i)] = fmt.Sprintf("%q is given twice", e)
		}
	}
	targets := 0
	for _, set := range []bool{in.Link != "", in.AdID != 0, in.CampaignID != 0} {
		if set {
			targets++
		}
	}
	if targets > 1 {
		p["link"] = "set at most one of link, adId and campaignId (none: every event)"
	}
	if targets > 0 && slices.Contains(in.Events, WebhookSiteQuality) {
		p["events"] = WebhookSiteQuality + " is the network's event: a webhook for one link, ad or campaign does not get it"
	}
	if in.AdID < 0 || in.CampaignID < 0 {
		p["adId"] = "ids are positive"
	}
	return p
}

// ParseWebhookInput decodes and checks a webhook create body:
// {"url","events","link"|"adId"|"campaignId"}, every problem named.
func ParseWebhookInput(body []byte, allowHTTP bool) (WebhookInput, error) {
	var in WebhookInput
	p := Problems{}
	fields, ok := object(body, p, "url", "events", "link", "adId", "campaignId", "unverified")
	if !ok {
		return in, Invalid("invalid webhook", p)
	}
	for _, f := range []struct {
		name, want string
		v          any
	}{{"url", "must be a string", &in.URL}, {"events", "must be an array of event types", &in.Events},
		{"link", "must be a link's code", &in.Link}, {"adId", "must be an ad's id (an integer)", &in.AdID},
		{"campaignId", "must be a campaign's id (an integer)", &in.CampaignID},
		{"unverified", "must be true or false", &in.Unverified}} {
		if raw, ok := present(fields, f.name); ok && json.Unmarshal(raw, f.v) != nil {
			p[f.name] = f.want
		}
	}
	for k, v := range in.Check(allowHTTP) {
		if _, named := p[k]; !named {
			p[k] = v
		}
	}
	return in, Invalid("invalid webhook", p)
}
