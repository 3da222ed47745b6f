package delivery_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"marquee"
	"marquee/delivery"
)

// TestPods: a video placement of at most 30-second ads, asked for pods
// of four ads lasting at most 60 seconds together, over 5,000 decisions
// among campaigns of 6- to 45-second videos (some sharing an exclusive
// label, one a wrapper of no declared duration): no ad longer than the
// placement takes, no pod longer than its duration, no campaign twice
// in a pod, no two campaigns of an exclusive label in one — while pods
// do fill (most with two or more ads, the 30-second ad among them) and,
// without a pod duration, take their four ads.
func TestPods(t *testing.T) {
	w := newWorld(t)
	type info struct {
		ms    int
		label string
	}
	ads := map[int64]info{}
	video := func(ms int, label string, exclusive bool) {
		c := w.camp(marquee.PriorityStandard, 1, func(c *marquee.Campaign) {
			if label != "" {
				c.Labels = []marquee.Label{{Name: label, Exclusive: exclusive}}
			}
		})
		for range 2 { // two ads each: the second must not follow the first into the pod
			id := w.ad(c, "", func(a *marquee.Ad) {
				a.Creative = &marquee.Creative{Type: marquee.CreativeVideo, MediaURL: "https://cdn.example/v.mp4", MimeType: "video/mp4", DurationMs: ms}
				if ms == 0 {
					a.Creative.MediaURL, a.Creative.MimeType, a.Creative.VASTTagURL = "", "", "https://buyer.example/vast"
				}
			})
			ads[id] = info{ms, label}
		}
	}
	video(6_000, "", false)
	video(15_000, "airline", true)
	video(15_000, "airline", true)
	video(20_000, "auto", false)
	video(30_000, "auto", false)
	video(45_000, "", false) // longer than the placement takes
	video(0, "", false)      // a wrapper of no declared duration
	video(10_000, "", false)
	preroll := marquee.Placement{ID: 9, PlacementInput: marquee.PlacementInput{Name: "preroll", Types: []string{marquee.CreativeVideo}, MaxDurationMs: 30_000}}
	w.ready(preroll)
	rnd := rand.New(rand.NewPCG(6, 6))
	sizes, with30 := map[int]int{}, 0
	for range 5000 {
		r := &delivery.Request{Slots: []delivery.Slot{{Div: "pod", Placement: "preroll", Count: 4, PodMs: 60_000}}}
		pod := w.e.Decide(context.Background(), r, now, rnd)[0]
		total, camps, labels := 0, map[int64]bool{}, map[string]int{}
		for _, ch := range pod {
			a := ads[ch.Ad.ID]
			if a.ms == 0 || a.ms > 30_000 {
				t.Fatalf("a pod holds ad %d of %d ms; want only ads of a declared duration of at most 30,000", ch.Ad.ID, a.ms)
			}
			if camps[ch.Campaign.ID] {
				t.Fatalf("a pod holds campaign %d twice: %v", ch.Campaign.ID, pod)
			}
			camps[ch.Campaign.ID] = true
			total += a.ms
			if a.label != "" {
				labels[a.label]++
			}
			with30 += boolInt(a.ms == 30_000)
		}
		if total > 60_000 {
			t.Fatalf("a pod lasts %d ms: %v; want at most 60,000", total, pod)
		}
		if labels["airline"] > 1 {
			t.Fatalf("a pod holds two airlines (an exclusive label): %v", pod)
		}
		sizes[len(pod)]++
	}
	if sizes[0] > 0 || sizes[1] > 500 || sizes[3]+sizes[4] == 0 || with30 == 0 {
		t.Errorf("pods by number of ads: %v, %d with the 30-second ad; want every pod filled, most with two or more, the 30-second ad among them", sizes, with30)
	}
	// Without a pod duration, a pod of four takes four ads (of the five
	// campaigns that fit, one airline at most).
	r := &delivery.Request{Slots: []delivery.Slot{{Div: "pod", Placement: "preroll", Count: 4}}}
	for range 200 {
		if pod := w.e.Decide(context.Background(), r, now, rnd)[0]; len(pod) != 4 {
			t.Fatalf("a pod of four without a duration = %d ads; want 4", len(pod))
		}
	}
	// A placement without a maximum takes the long ad and the wrapper.
	w2 := newWorld(t)
	w2.campaigns, w2.ads = w.campaigns, w.ads
	open := marquee.Placement{ID: 10, PlacementInput: marquee.PlacementInput{Name: "preroll", Types: []string{marquee.CreativeVideo}}}
	w2.ready(open)
	seen := map[int]bool{}
	for range 2000 {
		for _, ch := range w2.e.Decide(context.Background(), &delivery.Request{Slots: []delivery.Slot{{Div: "pod", Placement: "preroll", Count: 1}}}, now, rnd)[0] {
			seen[ads[ch.Ad.ID].ms] = true
		}
	}
	if !seen[45_000] || !seen[0] {
		t.Errorf("durations served without a maximum: %v; want the 45-second ad and the wrapper among them", seen)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
