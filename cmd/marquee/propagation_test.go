package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"marquee/loadgen"
)

// BenchmarkPropagation measures, on one PostgreSQL schema and on one
// MySQL database (sub-benchmarks postgres and mysql), with two instances
// A and B seeded with 1,000 ads while B serves the ads scenario at full
// speed (closed loop, 32 connections):
//
//   - the lag from a write on A to its visibility in B's list, over 1,000
//     sequential writes a random 0–50 ms apart: from A's 201 (the commit
//     is done) and, as an upper bound, from the moment the POST was sent;
//   - B's read throughput while A takes writes at 10/s, as a ratio to the
//     same load without writes (3 alternating rounds of 5 s).
//
// PostgreSQL's instances wake on NOTIFY (and poll every 1 s); MySQL's
// poll every 50 ms, the default there. Run it with:
//
//	MARQUEE_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	MARQUEE_TEST_MYSQL=mysql://root@127.0.0.1:3306/test \
//	  go test ./cmd/marquee -run XXX -bench Propagation -benchtime 1x
func BenchmarkPropagation(b *testing.B) {
	for _, db := range sharedDBs {
		b.Run(db.name, func(b *testing.B) { benchPropagation(b, db) })
	}
}

func benchPropagation(b *testing.B, db sharedDB) {
	dsn := db.dsn(b)
	var out strings.Builder
	if err := run(context.Background(), []string{"seed", "-db", dsn, "-ads", "1000", "-scheduled", "0", "-expired", "0"},
		func(string) string { return "" }, nil, &out, &out); err != nil {
		b.Fatal(err)
	}
	// Each store's default poll, over the tests' (a later -poll wins).
	poll := []string{"-poll", defaultPoll(db.name).String()}
	a, rd := db.start(b, dsn, poll...), db.start(b, dsn, poll...)
	u, _ := url.Parse(rd.url)
	reqs, err := loadgen.BuildRequests(u.Host, loadgen.AdsPaths(1, 10_000), nil)
	if err != nil {
		b.Fatal(err)
	}
	load := func(d time.Duration) float64 {
		res, err := loadgen.Run(context.Background(), loadgen.Config{Addr: u.Host, Requests: reqs, Conns: 32, Duration: d})
		if err != nil || res.Errors() > 0 {
			b.Fatalf("read load: %v, %d errors", err, res.Errors())
		}
		return res.ReqPerSec()
	}
	client := &http.Client{Timeout: 5 * time.Second}
	write := func(title string, end time.Time) (sent, acked time.Time) {
		sent = time.Now()
		req, _ := http.NewRequest("POST", a.url+"/api/v1/ad", strings.NewReader(adBody(title, time.Now().Add(-time.Hour), end, "")))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != 201 {
			b.Fatalf("write %s: %v %v", title, resp, err)
		}
		resp.Body.Close()
		return sent, time.Now()
	}
	b.ResetTimer()
	for range b.N {
		// Throughput with and without writes.
		var ratios []float64
		for r := range 3 {
			quiet := load(5 * time.Second)
			stop := make(chan struct{})
			var n atomic.Int64
			go func() {
				t := time.NewTicker(100 * time.Millisecond)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case <-t.C:
						write(fmt.Sprintf("w%d-%d", r, n.Add(1)), time.Now().Add(48*time.Hour))
					}
				}
			}()
			busy := load(5 * time.Second)
			close(stop)
			ratios = append(ratios, busy/quiet)
		}

		// Propagation lag under read load.
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			repeat(stop, func() bool { load(time.Second); return true })
		}()
		base := time.Now().Add(30 * time.Minute)
		var fromAck, fromSent []float64
		for i := range 1000 {
			title := fmt.Sprintf("p%d", i)
			// A pause of random length, so that writes do not fall in step
			// with B's poll (each would otherwise start just after the
			// poll that saw the one before, and wait a whole period).
			time.Sleep(rand.N(50 * time.Millisecond))
			// Each new ad ends before every other, so it heads B's list.
			sent, acked := write(title, base.Add(-time.Duration(i)*time.Second))
			for {
				resp, err := client.Get(rd.url + "/api/v1/ad?limit=1")
				if err != nil {
					b.Fatal(err)
				}
				var page struct{ Items []struct{ Title string } }
				json.NewDecoder(resp.Body).Decode(&page)
				resp.Body.Close()
				if len(page.Items) == 1 && page.Items[0].Title == title {
					now := time.Now()
					fromAck = append(fromAck, float64(now.Sub(acked))/1e6)
					fromSent = append(fromSent, float64(now.Sub(sent))/1e6)
					break
				}
				if time.Since(acked) > 10*time.Second {
					b.Fatalf("write %s not visible on B after 10 s", title)
				}
			}
		}
		close(stop)
		<-done
		slices.Sort(fromAck)
		slices.Sort(fromSent)
		slices.Sort(ratios)
		b.ReportMetric(fromAck[len(fromAck)/2], "lag-p50-ms")
		b.ReportMetric(fromAck[len(fromAck)*99/100], "lag-p99-ms")
		b.ReportMetric(fromSent[len(fromSent)/2], "sent-to-visible-p50-ms")
		b.ReportMetric(fromSent[len(fromSent)*99/100], "sent-to-visible-p99-ms")
		b.ReportMetric(ratios[1], "reads-with-writes/without")
	}
}
