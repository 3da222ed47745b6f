package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"marquee"
)

// AdWriter is the admin client of `marquee bench -writes N`: N ad writes a
// second to the target for as long as its context lives — replacing a
// random one of ads seeded ads (each keeps being active: it started an
// hour ago and ends 1–30 days from now), or creating ads when none were
// seeded. It counts what it sent and what failed.
type AdWriter struct {
	Target, Token string  // the server, and an ads:write key
	PerSec        float64 // writes a second
	Ads           int     // seeded ads to replace (0: create)
	Sent, Failed  atomic.Int64
}

// Run writes until ctx ends.
func (w *AdWriter) Run(ctx context.Context) {
	client := &http.Client{Timeout: 5 * time.Second}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	tick := time.NewTicker(time.Duration(float64(time.Second) / w.PerSec))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now().UTC()
		body := fmt.Sprintf(`{"title":"bench write %d","startAt":%q,"endAt":%q}`, i,
			now.Add(-time.Hour).Format(marquee.TimeLayout),
			now.Add(time.Duration(1+r.IntN(30))*24*time.Hour+time.Duration(r.IntN(86400))*time.Second).Format(marquee.TimeLayout))
		method, url := http.MethodPost, w.Target+"/api/v1/ad"
		if w.Ads > 0 {
			method, url = http.MethodPut, url+"/"+strconv.Itoa(1+r.IntN(w.Ads))
		}
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader([]byte(body)))
		if err != nil {
			panic(err) // a URL built above
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.Token)
		w.Sent.Add(1)
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				w.Failed.Add(1)
			}
			continue
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			w.Failed.Add(1)
		}
	}
}
