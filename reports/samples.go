package reports

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"marquee/reportrow"
	"marquee/targeting"
)

// Samples keeps, for forecasts (docs/api.md#forecasts), a bounded sample
// of the requests decisions saw: for each placement and UTC hour at most
// K of them (a reservoir: each of the hour's n requests is kept with the
// same chance K/n), with the viewer as targeting reads it and the
// request's keywords, never its address, user key or cookie. A Tally's
// flush takes each hour once it is over (Batch.Samples) and the store
// keeps it for SampleRetention; a shutdown or crash loses the hour under
// way, a sample and not a count.
//
// Memory: at most K samples × the placements requested in an hour, for
// the hour under way and the hours not yet flushed (at most
// maxPendingHours: older ones are dropped while the store is down); a
// sample is its viewer's strings (host, path, region…) and key-values,
// about 200 to 500 bytes. K = 20 and 100 placements: 2,000 samples an
// hour, under 1 MB.
//
// Offer is safe from any goroutine: one lock and a map look-up, and the
// request's attributes are read (and copied) only for a kept request.
type Samples struct {
	k    int
	mu   sync.Mutex
	hour int64 // unix seconds of the hour under way
	by   map[int64]*reservoir
	done []reportrow.RequestSample // finished hours, encoded, not yet taken
	rnd  *rand.Rand
}

// MaxSampleSize bounds K: the memory and the rows a forecast reads grow
// with it.
const MaxSampleSize = 1000

// SampleRetention is how long the store keeps samples: the weeks a
// forecast reads.
const SampleRetention = 8 * 7 * 24 * time.Hour

// maxPendingHours bounds the finished hours Samples holds for a flush.
const maxPendingHours = 3

type reservoir struct {
	n    int64
	kept []Sample
}

// Sample is one request kept: when, the viewer as the decision saw it
// (every attribute targeting reads but the address), and its keywords.
type Sample struct {
	At       time.Time
	Viewer   targeting.Viewer
	Keywords []string
}

// NewSamples returns samples that keep k requests of each placement and
// hour (k ≥ 1).
func NewSamples(k int) *Samples {
	return &Samples{k: max(k, 1), by: map[int64]*reservoir{}, rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5a3b1e))}
}

// SampleNeeds is what the edge fills of a kept request's viewer: every
// attribute targeting reads, but the address.
const SampleNeeds = targeting.NeedKV | targeting.NeedPage | targeting.NeedReferrer | targeting.NeedGeo | targeting.NeedDevice | targeting.NeedLanguage

// Offer offers a request of placement at now; when the reservoir keeps it,
// fill fills its viewer (SampleNeeds) and the sample keeps a copy of it
// and of keywords.
func (s *Samples) Offer(placement int64, now time.Time, fill func(*targeting.Viewer), v *targeting.Viewer, keywords []string) {
	hour := now.Unix() / 3600 * 3600
	s.mu.Lock()
	defer s.mu.Unlock()
	if hour != s.hour {
		s.finish(hour)
	}
	r := s.by[placement]
	if r == nil {
		r = &reservoir{}
		s.by[placement] = r
	}
	r.n++
	i := len(r.kept)
	if i >= s.k {
		if i = int(s.rnd.Int64N(r.n)); i >= s.k {
			return
		}
	}
	cp := *v
	fill(&cp)
	x := Sample{At: now.Truncate(time.Second), Viewer: cloneViewer(&cp), Keywords: make([]string, len(keywords))}
	for j, k := range keywords {
		x.Keywords[j] = strings.Clone(k)
	}
	if i == len(r.kept) {
		r.kept = append(r.kept, x)
	} else {
		r.kept[i] = x
	}
}

// cloneViewer copies v's strings and key-values (the request's buffers
// are reused after it) and leaves its address out.
func cloneViewer(v *targeting.Viewer) targeting.Viewer {
	c := *v
	c.IP = targeting.Viewer{}.IP
	c.KV = make([]targeting.KV, len(v.KV))
	for i, kv := range v.KV {
		c.KV[i] = targeting.KV{Key: strings.Clone(kv.Key), Value: strings.Clone(kv.Value)}
	}
	for _, f := range []*string{&c.Host, &c.Path, &c.Referrer, &c.Site, &c.Region, &c.City, &c.Metro, &c.Device, &c.Browser, &c.OS, &c.Language} {
		*f = strings.Clone(*f)
	}
	return c
}

// finish moves the hour under way to done and starts hour (under mu).
func (s *Samples) finish(hour int64) {
	for placement, r := range s.by {
		if len(r.kept) > 0 {
			s.done = append(s.done, reportrow.RequestSample{Hour: s.hour, Placement: placement, Offered: r.n, Doc: EncodeSamples(r.kept)})
		}
	}
	// Bound what waits for the store: the oldest hours go first.
	hours := map[int64]bool{}
	for _, d := range s.done {
		hours[d.Hour] = true
	}
	if len(hours) > maxPendingHours {
		keys := make([]int64, 0, len(hours))
		for h := range hours {
			keys = append(keys, h)
		}
		slices.Sort(keys)
		cut := keys[len(keys)-maxPendingHours]
		s.done = slices.DeleteFunc(s.done, func(d reportrow.RequestSample) bool { return d.Hour < cut })
	}
	s.hour, s.by = hour, map[int64]*reservoir{}
}

// take returns the finished hours (those before now's) for a flush.
func (s *Samples) take(now time.Time) []reportrow.RequestSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hour := now.Unix() / 3600 * 3600; hour != s.hour {
		s.finish(hour)
	}
	out := s.done
	s.done = nil
	return out
}

// putBack returns what a failed flush took.
func (s *Samples) putBack(rows []reportrow.RequestSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = append(rows, s.done...)
}

// sampleDoc is a sample as the store keeps it (JSON): attribute names,
// not the codes of this build.
type sampleDoc struct {
	At       int64       `json:"at"`
	Age      int         `json:"age,omitempty"`
	Gender   string      `json:"gender,omitempty"`
	Platform string      `json:"platform,omitempty"`
	Country  string      `json:"country,omitempty"`
	KV       [][2]string `json:"kv,omitempty"`
	Host     string      `json:"host,omitempty"`
	Path     string      `json:"path,omitempty"`
	Referrer string      `json:"referrer,omitempty"`
	Site     string      `json:"site,omitempty"`
	Region   string      `json:"region,omitempty"`
	City     string      `json:"city,omitempty"`
	Metro    string      `json:"metro,omitempty"`
	Device   string      `json:"device,omitempty"`
	Browser  string      `json:"browser,omitempty"`
	OS       string      `json:"os,omitempty"`
	Language string      `json:"language,omitempty"`
	Keywords []string    `json:"keywords,omitempty"`
}

// EncodeSamples writes samples as the store keeps them (a JSON array).
func EncodeSamples(samples []Sample) []byte {
	docs := make([]sampleDoc, len(samples))
	for i := range samples {
		x, v := &samples[i], &samples[i].Viewer
		d := sampleDoc{At: x.At.Unix(), Age: v.Age, Gender: targeting.GenderName(v.Gender), Platform: targeting.PlatformName(v.Platform),
			Country: v.CountryCode(), Host: v.Host, Path: v.Path, Referrer: v.Referrer, Site: v.Site, Region: v.Region, City: v.City,
			Metro: v.Metro, Device: v.Device, Browser: v.Browser, OS: v.OS, Language: v.Language, Keywords: x.Keywords}
		for _, kv := range v.KV {
			d.KV = append(d.KV, [2]string{kv.Key, kv.Value})
		}
		docs[i] = d
	}
	b, _ := json.Marshal(docs) // strings and numbers only: never fails
	return b
}

// DecodeSamples reads what EncodeSamples wrote.
func DecodeSamples(b []byte) ([]Sample, error) {
	var docs []sampleDoc
	if err := json.Unmarshal(b, &docs); err != nil {
		return nil, fmt.Errorf("request samples: %w", err)
	}
	out := make([]Sample, len(docs))
	for i, d := range docs {
		v := targeting.ViewerOf(d.Age, d.Gender, d.Country, d.Platform)
		v.Host, v.Path, v.Referrer, v.Site, v.Region, v.City, v.Metro = d.Host, d.Path, d.Referrer, d.Site, d.Region, d.City, d.Metro
		v.Device, v.Browser, v.OS, v.Language = d.Device, d.Browser, d.OS, d.Language
		for _, kv := range d.KV {
			v.KV = append(v.KV, targeting.KV{Key: kv[0], Value: kv[1]})
		}
		out[i] = Sample{At: time.Unix(d.At, 0).UTC(), Viewer: v, Keywords: d.Keywords}
	}
	return out, nil
}
