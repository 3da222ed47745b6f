package objstore_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"marquee"
	"marquee/collector"
	"marquee/objstore"
	"marquee/store/sqlite"
)

// fakeS3 is an in-process S3 that fails every request while down is set.
type fakeS3 struct {
	backend *s3mem.Backend
	url     string
	down    atomic.Bool
	failed  atomic.Int64
}

func newFakeS3(t *testing.T) *fakeS3 {
	f := &fakeS3{backend: s3mem.New()}
	if err := f.backend.CreateBucket("events"); err != nil {
		t.Fatal(err)
	}
	s3 := gofakes3.New(f.backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			f.failed.Add(1)
			http.Error(w, "injected outage", http.StatusServiceUnavailable)
			return
		}
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeS3) shipper(t *testing.T) *objstore.S3 {
	u, _ := url.Parse(f.url)
	s, err := objstore.NewS3(objstore.S3Config{URL: "s3://events/prod/v1", Endpoint: u.Host, Insecure: true,
		Region: "us-east-1", AccessKey: "key", SecretKey: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// objects returns every object under the prefix, decoded, by key.
func (f *fakeS3) objects(t *testing.T) map[string]string {
	t.Helper()
	list, err := f.backend.ListBucket("events", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range list.Contents {
		obj, err := f.backend.GetObject("events", o.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		r, err := collector.NewReader(o.Key, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("object %s does not decode: %v", o.Key, err)
		}
		out[o.Key] = string(b)
	}
	return out
}

func TestEventsLandInS3EvenThroughAnOutage(t *testing.T) {
	f := newFakeS3(t)
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := collector.New(collector.Config{Dir: dir, Instance: "i1", Shipper: f.shipper(t), RotateBytes: 2000,
		FlushEvery: 5 * time.Millisecond}, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(from, to int) {
		for i := from; i < to; i++ {
			if err := c.Append(uint64(i), fmt.Appendf(nil, "{\"n\":%d,\"pad\":%q}\n", i, strings.Repeat("z", 50)), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(0, 100)
	f.down.Store(true) // uploads fail for a while
	send(100, 200)
	time.Sleep(300 * time.Millisecond)
	f.down.Store(false)
	send(200, 300)
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	objs := f.objects(t)
	var all strings.Builder
	for k, body := range objs {
		if !strings.HasPrefix(k, "prod/v1/dt=") || !strings.Contains(k, "/hour=") || !strings.HasSuffix(k, ".ndjson.lz4") ||
			!strings.HasPrefix(filepath.Base(k), "i1-") {
			t.Errorf("object key %q: want prod/v1/dt=YYYY-MM-DD/hour=HH/i1-<seq>.ndjson.lz4", k)
		}
		all.WriteString(body)
	}
	for i := range 300 {
		if n := strings.Count(all.String(), fmt.Sprintf("{\"n\":%d,", i)); n != 1 {
			t.Fatalf("event %d is in the bucket %d times; want once", i, n)
		}
	}
	if f.failed.Load() == 0 {
		t.Error("the outage failed no upload; the test did not test retries")
	}
	if left := spoolFiles(dir); len(left) != 0 {
		t.Errorf("spool still holds %v after everything shipped", left)
	}
}

func TestLeftoversShipAtStart(t *testing.T) {
	f := newFakeS3(t)
	f.down.Store(true)
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, _ := collector.New(collector.Config{Dir: dir, Instance: "i2", Shipper: f.shipper(t)}, log, nil)
	c.Append(0, []byte("{\"left\":\"over\"}\n"), 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	c.Close(ctx) // the store is down: the finished file stays
	cancel()
	if len(spoolFiles(dir)) != 1 {
		t.Fatalf("spool = %v; want the one unshipped file", spoolFiles(dir))
	}
	f.down.Store(false)
	c2, err := collector.New(collector.Config{Dir: dir, Instance: "i2", Shipper: f.shipper(t)}, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2.Close(context.Background())
	objs := f.objects(t)
	if len(objs) != 1 || len(spoolFiles(dir)) != 0 {
		t.Fatalf("bucket %v, spool %v; want the leftover shipped and deleted", objs, spoolFiles(dir))
	}
	for _, body := range objs {
		if !strings.Contains(body, `"left":"over"`) {
			t.Errorf("shipped leftover = %q", body)
		}
	}
}

// spoolFiles lists a collector's spool: finished files in their
// partitions, and any still being written.
func spoolFiles(dir string) []string {
	done, _ := filepath.Glob(filepath.Join(dir, "dt=*", "hour=*", "*"))
	part, _ := filepath.Glob(filepath.Join(dir, "tmp", "*"))
	return append(done, part...)
}

// Assets keeps an image's bytes in the bucket and its facts in the
// store, and reads it back from there; an unknown one is not found.
func TestAssetsInTheBucket(t *testing.T) {
	f := newFakeS3(t)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := objstore.Assets{Meta: st, S3: f.shipper(t)}
	ctx := context.Background()
	body := []byte("\x89PNG\r\n\x1a\n…the image")
	as := marquee.Asset{SHA: strings.Repeat("ab", 32), Type: "image/png", Width: 3, Height: 2, Size: int64(len(body))}
	if _, created, err := a.PutAsset(ctx, as, body); err != nil || !created {
		t.Fatalf("PutAsset = %v, %v", created, err)
	}
	obj, err := f.backend.GetObject("events", "prod/v1/assets/"+as.SHA+".png", nil)
	if err != nil {
		t.Fatalf("the bucket lacks the image: %v", err)
	}
	raw, _ := io.ReadAll(obj.Contents)
	obj.Contents.Close()
	if !bytes.Equal(raw, body) {
		t.Errorf("the bucket holds %q; want the image", raw)
	}
	if _, inDB, _ := st.Asset(ctx, as.SHA); len(inDB) != 0 {
		t.Errorf("the database holds %d bytes of the image; want none (they are in the bucket)", len(inDB))
	}
	got, b, err := a.Asset(ctx, as.SHA)
	if err != nil || !bytes.Equal(b, body) || got.Width != 3 || got.Type != "image/png" {
		t.Fatalf("Asset = %+v, %q, %v", got, b, err)
	}
	if _, _, err := a.Asset(ctx, strings.Repeat("cd", 32)); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("Asset(unknown) = %v; want not found", err)
	}
}
