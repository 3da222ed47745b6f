package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"marquee"
)

// Webhooks: created active, read back, listed, disabled with a reason and
// enabled again, deleted with their delivery log; every change in the
// changelog (other instances read them again).
func testWebhooks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	before, err := st.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := marquee.WebhookInput{URL: "https://hooks.example/in?x='\"", Events: []string{"click", "conversion"}, Link: "promo"}
	w, err := st.CreateWebhook(ctx, in, "nonce-1")
	if err != nil || w.ID == 0 || w.State != marquee.WebhookActive {
		t.Fatalf("CreateWebhook = %+v, %v; want an active webhook", w, err)
	}
	got, err := st.Webhook(ctx, w.ID)
	if err != nil || got.URL != in.URL || !slices.Equal(got.Events, in.Events) || got.Link != "promo" || got.Nonce != "nonce-1" || got.CreatedAt.IsZero() {
		t.Fatalf("Webhook(%d) = %+v, %v; want %+v with its nonce", w.ID, got, err, in)
	}
	w2, err := st.CreateWebhook(ctx, marquee.WebhookInput{URL: "https://b.example/", Events: []string{"impression"}, CampaignID: 7, Unverified: true}, "nonce-2")
	if err != nil {
		t.Fatal(err)
	}
	if all, err := st.Webhooks(ctx); err != nil || len(all) != 2 || all[0].ID != w.ID || all[1].CampaignID != 7 || all[0].Unverified || !all[1].Unverified {
		t.Fatalf("Webhooks = %+v, %v; want both, by id, the second asking for unverified events", all, err)
	}
	if d, err := st.SetWebhookState(ctx, w.ID, marquee.WebhookDisabled, "24 h of failures: 503"); err != nil || d.State != marquee.WebhookDisabled {
		t.Fatalf("SetWebhookState = %+v, %v", d, err)
	}
	if got, _ := st.Webhook(ctx, w.ID); got.State != marquee.WebhookDisabled || got.DisabledReason != "24 h of failures: 503" {
		t.Fatalf("after disabling: %+v; want disabled with its reason", got)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	ds := []marquee.WebhookDelivery{{WebhookID: w.ID, MessageID: "m1", At: at, Status: 503, LatencyMS: 12, Attempt: 1, Events: 3, Error: "status 503"},
		{WebhookID: w.ID, MessageID: "m1", At: at.Add(time.Second), Status: 200, LatencyMS: 8, Attempt: 2, Events: 3},
		{WebhookID: w2.ID, MessageID: "m2", At: at, Status: 200, Attempt: 1, Events: 1}}
	if err := st.AddWebhookDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	log, err := st.WebhookDeliveries(ctx, w.ID, 10)
	if err != nil || len(log) != 2 || log[0] != ds[1] || log[1] != ds[0] {
		t.Fatalf("WebhookDeliveries = %+v, %v; want %+v newest first", log, err, ds[:2])
	}
	if err := st.DeleteWebhook(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Webhook(ctx, w.ID); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("Webhook after delete = %v; want not found", err)
	}
	if err := st.DeleteWebhook(ctx, w.ID); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("DeleteWebhook again = %v; want not found", err)
	}
	if log, _ := st.WebhookDeliveries(ctx, w.ID, 10); len(log) != 0 {
		t.Fatalf("deliveries after delete = %+v; want none", log)
	}
	chs, err := st.Changes(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range chs {
		if c.Entity == marquee.EntityWebhook {
			n++
		}
	}
	if n != 4 { // two creates, a state, a delete
		t.Fatalf("changelog has %d webhook entries; want 4: %+v", n, chs)
	}
}
