package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// streamBroker is a broker a stream test runs its own of, so that it can
// stop it and start it again with what it stored.
type streamBroker interface {
	flags() []string // marquee serve's flags that send events to it
	stop()
	start()
	// received returns every event stored, in the broker's order per
	// key (a Kafka partition, the JetStream stream): the messages'
	// values, with the event id each carries beside the value.
	received(t *testing.T) []streamed
}

type streamed struct {
	key, eid string
	line     map[string]any
}

// natsBroker runs nats-server with JetStream on a spare port, storing in
// a temp dir (skipped when nats-server is not installed).
type natsBroker struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
}

// spare is a free TCP port on 127.0.0.1 for a server a test stops and
// starts again on the same port. It is taken below the kernel's ephemeral
// range (ip_local_port_range, 32768–60999 by default): a port from there
// (":0") can be handed to another test's outgoing connection while its
// server is down, and the restarted server then cannot listen.
func spare(t *testing.T) int {
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		ln.Close()
		spares.Lock()
		taken := spares.ports[port]
		spares.ports[port] = true
		spares.Unlock()
		if !taken {
			return port
		}
	}
	t.Fatal("no free port in 20000–31999")
	return 0
}

// spares are the ports spare has handed out in this process, never handed
// out twice (a stopped server's port is free to listen on).
var spares = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

func newNATSBroker(t *testing.T) *natsBroker {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
			t.Skip("nats-server is not installed (Debian: apt-get install nats-server; .ci/run installs it): skipping the NATS stream tests")
		}
		bin = "/usr/sbin/nats-server"
	}
	b := &natsBroker{t: t, bin: bin, dir: t.TempDir(), port: spare(t)}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *natsBroker) url() string { return "nats://127.0.0.1:" + strconv.Itoa(b.port) }

func (b *natsBroker) flags() []string {
	return []string{"-events-nats", "url=" + b.url() + ",subject=marquee.events,stream=EVENTS,create=true,key=user"}
}

func (b *natsBroker) start() {
	b.cmd = exec.Command(b.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(b.port), "-js", "-sd", b.dir)
	if err := b.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	eventually(b.t, 10*time.Second, func() string {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(b.port)); err == nil {
			c.Close()
			return ""
		}
		return "nats-server does not listen"
	})
}

func (b *natsBroker) stop() {
	if b.cmd != nil {
		b.cmd.Process.Kill()
		b.cmd.Wait()
		b.cmd = nil
	}
}

func (b *natsBroker) received(t *testing.T) []streamed {
	return natsReceived(t, b.url(), "EVENTS", false)
}

// natsReceived reads every message of a JetStream stream in order:
// runs of events (each message's id its first event's and its count), or
// one event a message (its id the event's) when one is true.
func natsReceived(t *testing.T, url, stream string, one bool) []streamed {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	// A bound on the whole read (a message a round trip: thousands of
	// them), not a speed: generous, for a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil // not created yet
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []streamed
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		// A message is a run of event lines (NDJSON); its id is its
		// first event's and its count.
		lines := strings.Split(strings.TrimSuffix(string(m.Data), "\n"), "\n")
		if got := m.Header.Get("Marquee-Events"); got != strconv.Itoa(len(lines)) {
			t.Fatalf("message %d holds %d events; its Marquee-Events header says %q", seq, len(lines), got)
		}
		for i, l := range lines {
			var line map[string]any
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("message %d: %q is not an event line", seq, l)
			}
			id := fmt.Sprintf("%v+%d", line["id"], len(lines))
			if one {
				id = fmt.Sprint(line["id"])
			}
			if i == 0 && m.Header.Get(jetstream.MsgIDHeader) != id {
				t.Fatalf("message %d: Nats-Msg-Id %q; want %q", seq, m.Header.Get(jetstream.MsgIDHeader), id)
			}
			out = append(out, streamed{eid: line["id"].(string), line: line})
		}
	}
	return out
}

// kafkaBroker is franz-go's in-process cluster (kfake) on a fixed port,
// persisting to a temp dir so that it keeps its records across a stop.
type kafkaBroker struct {
	t    *testing.T
	dir  string
	port int
	c    *kfake.Cluster
}

func newKafkaBroker(t *testing.T) *kafkaBroker {
	b := &kafkaBroker{t: t, dir: t.TempDir(), port: spare(t)}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *kafkaBroker) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

func (b *kafkaBroker) flags() []string {
	return []string{"-events-kafka", "brokers=" + b.addr() + ",topic=events,key=user"}
}

func (b *kafkaBroker) start() {
	c, err := kfake.NewCluster(kfake.Ports(b.port), kfake.DataDir(b.dir), kfake.SeedTopics(3, "events"))
	if err != nil {
		b.t.Fatal(err)
	}
	b.c = c
}

func (b *kafkaBroker) stop() {
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

func (b *kafkaBroker) received(t *testing.T) []streamed {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr()), kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []streamed
	for {
		wait := time.Second // a second without a record: all read
		if len(out) == 0 {
			wait = 5 * time.Second // the first fetch also finds the cluster and the partitions
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		fs := cl.PollFetches(ctx)
		cancel()
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				t.Logf("reading %s/%d: %v", e.Topic, e.Partition, e.Err)
			}
		}
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			var line map[string]any
			if err := json.Unmarshal(r.Value, &line); err != nil {
				t.Fatalf("record %d/%d is not an event line: %q", r.Partition, r.Offset, r.Value)
			}
			s := streamed{key: string(r.Key), line: line}
			for _, h := range r.Headers {
				if h.Key == "eid" {
					s.eid = string(h.Value)
				}
			}
			out = append(out, s)
		})
		if n == 0 {
			return out
		}
	}
}

// streamLoad posts events from 4 clients, each its own user with a
// counter, until stop is closed, and returns the events acknowledged
// (202), as "u<client>/<n>".
func streamLoad(base string, stop <-chan struct{}) func() []string {
	return streamLoadAs(base, "u", stop, nil)
}

// streamLoadAs is streamLoad with users named prefix<client>, counting
// the acknowledged events in acks as they come (nil: not counted).
func streamLoadAs(base, prefix string, stop <-chan struct{}, acks *atomic.Int64) func() []string {
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			client := &http.Client{Timeout: 5 * time.Second}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"type":"impression","uid":"%[1]s%[2]d","who":"%[1]s%[2]d","n":%[3]d}`, prefix, c, n)
				resp, err := client.Post(base+"/e", "application/json", strings.NewReader(body))
				if err != nil {
					return // the server is gone
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 202 {
					mu.Lock()
					acked = append(acked, fmt.Sprintf("%s%d/%d", prefix, c, n))
					mu.Unlock()
					if acks != nil {
						acks.Add(1)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	return func() []string {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
}

// checkStreamed checks that every acknowledged event is in the broker
// (copies aside: a copy has the id of the first) and that each user's
// events are in the order sent; it returns what is missing, or "". The
// user is the event's "who" ("u<client>"): its uid is the pseudonym the
// privacy mode made of it, which keys the message.
func checkStreamed(got []streamed, acked []string, byKey bool) string {
	seen := map[string]bool{}
	last := map[string]float64{}
	lastAt := map[string]int{}
	have := map[string]bool{}
	for i, s := range got {
		if s.eid == "" || s.eid != s.line["id"] {
			return fmt.Sprintf("message %v: event id %q; want the line's id", s.line, s.eid)
		}
		if seen[s.eid] {
			continue // a copy
		}
		seen[s.eid] = true
		uid, _ := s.line["who"].(string)
		n, _ := s.line["n"].(float64)
		if pseudonym, _ := s.line["uid"].(string); byKey && (s.key != pseudonym || pseudonym == "" || pseudonym == uid) {
			return fmt.Sprintf("message %v keyed %q; want its user's pseudonym %q", s.line, s.key, pseudonym)
		}
		if p, ok := last[uid]; ok && n <= p {
			return fmt.Sprintf("user %s: event %v (message %d, id %s) after %v (message %d, id %v): out of order", uid, n, i, s.eid, p, lastAt[uid], got[lastAt[uid]].eid)
		}
		last[uid], lastAt[uid] = n, i
		have[fmt.Sprintf("%s/%v", uid, n)] = true
	}
	missing := 0
	for _, k := range acked {
		if !have[k] {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Sprintf("%d of %d acknowledged events are not in the broker (%d messages)", missing, len(acked), len(got))
	}
	return ""
}

// Every acknowledged event reaches the broker, in order per user, with
// the broker stopped for 10 s in the middle: the collector keeps
// accepting, and the backlog is sent when it is back.
func TestStreamsBrokerOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a 10 s broker outage per broker")
	}
	for _, c := range []struct {
		name   string
		broker func(*testing.T) streamBroker
		byKey  bool
		once   bool // each event stored once (-analytics), not at least once
	}{{"nats", func(t *testing.T) streamBroker { return newNATSBroker(t) }, false, false},
		{"kafka", func(t *testing.T) streamBroker { return newKafkaBroker(t) }, true, false},
		{"clickhouse", func(t *testing.T) streamBroker { return newClickHouseServer(t) }, false, true}} {
		t.Run(c.name, func(t *testing.T) {
			b := c.broker(t)
			in := start(t, t.TempDir(), nil, append([]string{"-insecure-admin", "-events-durable", "-events-flush", "20ms"}, b.flags()...)...)
			t.Cleanup(func() {
				if t.Failed() {
					var streamMetrics []string
					for l := range strings.SplitSeq(in.get("/metrics").body, "\n") {
						if strings.HasPrefix(l, "marquee_stream_") {
							streamMetrics = append(streamMetrics, l)
						}
					}
					t.Logf("marquee's log:\n%s\nits stream metrics:\n%s", in.log, strings.Join(streamMetrics, "\n"))
				}
			})
			stop := make(chan struct{})
			wait := streamLoad(in.url, stop)
			time.Sleep(time.Second)
			b.stop()
			eventually(t, 20*time.Second, func() string {
				if strings.Contains(in.get("/readyz").body, `"streams":"`+c.name+`: down"`) {
					return ""
				}
				return "/readyz does not say the broker is down: " + in.get("/readyz").body
			})
			time.Sleep(10 * time.Second)
			b.start()
			time.Sleep(time.Second)
			close(stop)
			acked := wait()
			if len(acked) < 200 {
				t.Fatalf("only %d events acknowledged; the test needs load", len(acked))
			}
			eventually(t, 60*time.Second, func() string { return checkStreamed(b.received(t), acked, c.byKey) })
			if c.once {
				if msg := storedOnce(b.received(t)); msg != "" {
					t.Error(msg)
				}
			}
			m := in.get("/metrics").body
			for _, want := range []string{`marquee_stream_up{stream="` + c.name + `"} 1`, `marquee_stream_retries_total{stream="` + c.name + `"}`} {
				if !strings.Contains(m, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}

// Events acknowledged in durable mode while the broker is down, by a
// Marquee then killed (SIGKILL), reach the broker once Marquee restarts
// on the same data and the broker is back.
func TestStreamsRestartReplaysFromFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, c := range []struct {
		name   string
		broker func(*testing.T) streamBroker
		once   bool // each event stored once (-analytics), not at least once
	}{{"nats", func(t *testing.T) streamBroker { return newNATSBroker(t) }, false},
		{"kafka", func(t *testing.T) streamBroker { return newKafkaBroker(t) }, false},
		{"clickhouse", func(t *testing.T) streamBroker { return newClickHouseServer(t) }, true}} {
		t.Run(c.name, func(t *testing.T) {
			b := c.broker(t)
			data := t.TempDir()
			// Files rotate every 300 ms: the kill leaves finished files the
			// broker lacks, and a file being written.
			base, cmd := startChild(t, data, append([]string{"-events-durable", "-events-flush", "20ms", "-events-rotate-age", "300ms"}, b.flags()...)...)
			// Some events reach the broker, then it goes away and more are
			// acknowledged into the files only; then Marquee is killed.
			// At least 50 events before the broker stops and 50 more
			// after (durable acknowledgements wait for the disk: a busy
			// machine makes fewer in the same time).
			stop := make(chan struct{})
			var acks atomic.Int64
			wait := streamLoadAs(base, "u", stop, &acks)
			atLeast := func(n int64) {
				for deadline := time.Now().Add(30 * time.Second); acks.Load() < n && time.Now().Before(deadline); {
					time.Sleep(20 * time.Millisecond)
				}
			}
			time.Sleep(500 * time.Millisecond)
			atLeast(50)
			b.stop()
			time.Sleep(time.Second)
			atLeast(acks.Load() + 50)
			cmd.Process.Kill()
			cmd.Wait()
			close(stop)
			acked := wait()
			if len(acked) < 100 {
				t.Fatalf("only %d events acknowledged; the test needs load", len(acked))
			}
			b.start()
			in := start(t, data, nil, append([]string{"-insecure-admin", "-events-durable"}, b.flags()...)...)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("marquee's log:\n%s\n/readyz: %s", in.log, in.get("/readyz").body)
				}
			})
			// A ClickHouse server killed and restarted serves its tables
			// again in seconds alone, but took over a minute twice in CI's
			// -race run of every test on two loaded cores: the bound is
			// on eventual delivery, not on the broker's start.
			eventually(t, 3*time.Minute, func() string { return checkStreamed(b.received(t), acked, false) })
			if c.once {
				if msg := storedOnce(b.received(t)); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// With the broker down and the backlog at its bound, events get 503 with
// Retry-After and /readyz says why; with the broker back, they are
// accepted again and nothing acknowledged is missing.
func TestStreamsBacklogFullIs503(t *testing.T) {
	t.Parallel()
	b := newNATSBroker(t)
	flags := b.flags()
	flags[1] += ",backlog=16KiB"
	in := start(t, t.TempDir(), nil, append([]string{"-insecure-admin", "-events-flush", "10ms"}, flags...)...)
	b.stop()
	var acked []string
	var r response
	for n := 0; n < 5000; n++ {
		r = post(in, "application/json", fmt.Sprintf(`{"uid":"u0","who":"u0","n":%d,"pad":"%s"}`, n, strings.Repeat("x", 200)))
		if r.status == 503 {
			break
		}
		if r.status != 202 {
			t.Fatalf("POST /e = %d %s", r.status, r.body)
		}
		acked = append(acked, fmt.Sprintf("u0/%d", n))
		time.Sleep(time.Millisecond)
	}
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "backlog is full") {
		t.Fatalf("POST /e with the backlog full = %d %s (Retry-After %q); want 503 naming the stream's backlog", r.status, r.body, r.header.Get("Retry-After"))
	}
	if body := in.get("/readyz").body; !strings.Contains(body, `"events":"stream backlog full"`) || !strings.Contains(body, `"streams":"nats: backlog full"`) {
		t.Errorf("/readyz = %s; want it to say the stream's backlog is full", body)
	}
	b.start()
	eventually(t, 30*time.Second, func() string {
		if r := post(in, "application/json", `{"uid":"u1","who":"u1","n":0}`); r.status != 202 {
			return fmt.Sprintf("POST /e after the broker came back = %d %s", r.status, r.body)
		}
		return ""
	})
	acked = append(acked, "u1/0")
	eventually(t, 30*time.Second, func() string { return checkStreamed(b.received(t), acked, false) })
}

// Against the NATS server of the machine (MARQUEE_TEST_NATS, e.g.
// nats://127.0.0.1:4222): events go to a stream Marquee creates, in runs
// of NDJSON (the default) or one a message (message-bytes=0).
func TestStreamsSharedNATS(t *testing.T) {
	t.Parallel()
	url := os.Getenv("MARQUEE_TEST_NATS")
	if url == "" {
		t.Skip("MARQUEE_TEST_NATS is not set (e.g. nats://127.0.0.1:4222): skipping the test against a running NATS server")
	}
	for _, c := range []struct {
		name, opt string
		one       bool
	}{{"runs", "", false}, {"one event a message", ",message-bytes=0", true}} {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("MARQUEE_TEST_%d", time.Now().UnixNano())
			defer func() {
				nc, err := nats.Connect(url)
				if err == nil {
					js, _ := jetstream.New(nc)
					js.DeleteStream(context.Background(), name)
					nc.Close()
				}
			}()
			data := t.TempDir()
			in := start(t, data, nil, "-insecure-admin", "-events-durable", "-events-nats", "url="+url+",subject="+strings.ToLower(name)+",stream="+name+",create=true"+c.opt)
			var acked []string
			for n := range 200 {
				if r := post(in, "application/json", fmt.Sprintf(`{"uid":"u0","who":"u0","n":%d}`, n)); r.status != 202 {
					t.Fatalf("POST /e = %d %s", r.status, r.body)
				}
				acked = append(acked, fmt.Sprintf("u0/%d", n))
			}
			eventually(t, 20*time.Second, func() string { return checkStreamed(natsReceived(t, url, name, c.one), acked, false) })
			if _, err := os.Stat(filepath.Join(data, "events", "streams", "nats.cursor")); err != nil {
				t.Errorf("no cursor kept in the spool: %v", err)
			}
		})
	}
}
