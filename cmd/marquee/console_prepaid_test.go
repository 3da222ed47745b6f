//go:build !noconsole

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleAddFunds: an advertiser's own login adds funds to its
// prepaid balance in the console — "Add funds" opens a Stripe Checkout
// Session (stripe-mock) and the browser goes to its page; back from
// Stripe once the webhook credited it, the page thanks it and shows the
// new balance — and the team gives a credit from the same page.
func TestConsoleAddFunds(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	flags := stripeFlags(t)
	dir := t.TempDir()
	addUser(t, dir, "owner@example.com", "owner", "owner-password-1")
	in := start(t, dir, nil, append(flags, "-currency", "EUR")...)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme","prepaid":true}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"adv@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")

	adv := newTab(t, in.url, 1280, 900)
	adv.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	adv.signIn("adv@acme.test", "advertiser password")
	adv.open("#/advertisers/1", "#add-funds")
	adv.labelled("the prepaid advertiser")
	if got := adv.text("#balance"); !strings.Contains(got, "0.00") {
		t.Errorf("the balance before any top-up = %q; want €0.00", got)
	}
	adv.absent("#give-credit", "an advertiser's account gives itself no credit")
	adv.do("add 25", chromedp.SetValue(chromedp.CSS(`#top-up-amount`), "25"), click(`#add-funds-button`))
	var topUp string
	eventually(t, 10*time.Second, func() string {
		r := in.admin("GET", "/api/v1/advertisers/1/balance", "")
		var b struct {
			TopUps []struct {
				ID, Status, CheckoutURL, StripeSessionID string
				Amount                                   float64
			}
		}
		if json.Unmarshal([]byte(r.body), &b); len(b.TopUps) != 1 || b.TopUps[0].Amount != 25 || b.TopUps[0].Status != "pending" {
			return "the balance's top-ups: " + r.body
		}
		topUp = b.TopUps[0].ID
		if _, requests := adv.logged(); !slices.Contains(requests, b.TopUps[0].CheckoutURL) {
			return "the browser did not go to the Checkout page " + b.TopUps[0].CheckoutURL + "; it asked for " + strings.Join(requests, ", ")
		}
		paid := checkoutEvent("evt_console", "checkout.session.completed", b.TopUps[0].StripeSessionID, b.TopUps[0].ID, 2500, "eur", "")
		if r := in.webhook(paid, stripeSignature(paid, time.Now(), stripeWebhookSecret)); !strings.Contains(r.body, `"credited":true`) {
			return "webhook: " + r.body
		}
		return ""
	})
	adv.open("#/advertisers/1?topUp="+topUp, "#top-up-back")
	if got := adv.text("#prepaid-balance"); !strings.Contains(got, "25.00 was added") || !strings.Contains(adv.text("#balance"), "25.00") || !strings.Contains(got, "paid") {
		t.Errorf("back from Stripe: %q; want thanks for €25.00, the balance €25.00 and the top-up paid", got)
	}

	team := newTab(t, in.url, 1280, 900)
	team.do("open the console", chromedp.Navigate(in.url+"/admin/"))
	team.signIn("owner@example.com", "owner-password-1")
	team.open("#/advertisers/1", "#give-credit")
	team.do("give a credit", chromedp.SetValue(chromedp.CSS(`#credit-amount`), "5"), chromedp.SendKeys(chromedp.CSS(`#credit-reason`), "refund of a misdelivered day"),
		click(`#give-credit button[type=submit]`))
	team.waitFor("the credit in the balance", `!!document.querySelector('#balance')?.textContent.includes('30.00')`, 10*time.Second)
	if errs, _ := team.logged(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
