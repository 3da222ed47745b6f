package counters_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"marquee/counters"
	"marquee/counters/counterstest"
)

func TestMemory(t *testing.T) {
	counterstest.Run(t, func(t *testing.T, _ int) counterstest.Counters {
		return sharedMemory(t)
	})
}

// sharedMemory is one Memory per test: the "instances" of a test share it.
var memories = map[*testing.T]*counters.Memory{}

func sharedMemory(t *testing.T) *counters.Memory {
	if m := memories[t]; m != nil {
		return m
	}
	m := counters.NewMemory(counters.DefaultMemory)
	memories[t] = m
	return m
}

// TestRedis runs the contract on the Redis of MARQUEE_TEST_REDIS
// (redis://127.0.0.1:6379/0; each test under a prefix of its own), three
// clients standing for three instances.
func TestRedis(t *testing.T) {
	url := os.Getenv("MARQUEE_TEST_REDIS")
	if url == "" {
		t.Skip("MARQUEE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): the Redis counters are not tested")
	}
	counterstest.Run(t, func(t *testing.T, _ int) counterstest.Counters {
		prefix := prefixOf(t)
		r, err := counters.NewRedis(url, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		if err := r.Ping(context.Background()); err != nil {
			t.Fatalf("Redis at %s: %v", url, err)
		}
		return r
	})
}

// TestRedisUnixSocket runs the contract on a Redis of its own listening
// on a Unix socket (-counters unix:///path?db=N), when redis-server is
// installed.
func TestRedisUnixSocket(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server here (apt-get install -y redis-server): the Unix socket is not tested")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	srv := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url := "unix://" + sock + "?db=0"
	counterstest.Run(t, func(t *testing.T, _ int) counterstest.Counters {
		r, err := counters.NewRedis(url, prefixOf(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		for start := time.Now(); r.Ping(context.Background()) != nil; time.Sleep(20 * time.Millisecond) {
			if time.Since(start) > 5*time.Second {
				t.Fatalf("redis-server on %s did not answer within 5s", sock)
			}
		}
		return r
	})
}

var prefixes = map[*testing.T]string{}

func prefixOf(t *testing.T) string {
	if p, ok := prefixes[t]; ok {
		return p
	}
	var b [6]byte
	rand.Read(b[:])
	p := "marquee-test:" + hex.EncodeToString(b[:]) + ":"
	prefixes[t] = p
	return p
}

// Memory stays within its limit however many users come: a million
// fresh user keys, each served a capped campaign once, fill at most the
// limit (by the weigher and by the heap), and users who keep coming back
// (every 20,000 new users) keep their caps through the flood.
func TestMemoryBound(t *testing.T) {
	const limit = 16 << 20
	ctx := context.Background()
	now := time.Now()
	heap := func() uint64 {
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return s.HeapAlloc
	}
	before := heap()
	m := counters.NewMemory(limit)
	takes := []counters.Take{{Campaign: 7, Count: 1, Within: 24 * time.Hour}}
	took := make([]int, 1)
	at := now                        // a microsecond a decision
	regular := func() (capped int) { // users 1-1000 come back: each is at its cap
		for u := uint64(1); u <= 1000; u++ {
			at = at.Add(time.Microsecond)
			if m.Take(ctx, u, at, takes, took, nil); took[0] == 0 {
				capped++
			}
		}
		return capped
	}
	for range 5 {
		regular()
	}
	for u := uint64(1_000_000); u < 2_000_000; u++ {
		at = at.Add(time.Microsecond)
		m.Take(ctx, u, at, takes, took, nil)
		if u%20_000 == 0 {
			regular()
		}
	}
	grown := int64(heap()) - int64(before)
	if m.Bytes() > limit || grown > limit*5/4 {
		t.Errorf("after 1M fresh users, a limit of %d bytes: the weigher counts %d, the heap grew %d; want both within the limit (heap: +25%%)", limit, m.Bytes(), grown)
	}
	if n := regular(); n < 990 {
		t.Errorf("after the flood, %d of 1,000 returning users are still at their cap; want nearly all (each came back before a third of the limit's worth of new users had)", n)
	}
	t.Logf("1M fresh users in %d bytes: %d users kept, %d bytes by the weigher, heap +%d", limit, m.Users(), m.Bytes(), grown)
	runtime.KeepAlive(m)
}

// Redis reads the serves a server before this layout wrote (a field by
// the bare campaign id, 8-byte unix ns times), and a user's key expires
// when the longest window of their caps has passed, not days later.
func TestRedisLayout(t *testing.T) {
	url := os.Getenv("MARQUEE_TEST_REDIS")
	if url == "" {
		t.Skip("MARQUEE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): the Redis counters are not tested")
	}
	ctx := context.Background()
	prefix := prefixOf(t)
	r, err := counters.NewRedis(url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	opt, _ := redis.ParseURL(url)
	raw := redis.NewClient(opt)
	defer raw.Close()
	now := time.Now().Truncate(time.Millisecond)
	var old []byte
	for _, ago := range []time.Duration{2 * time.Hour, 10 * time.Minute, 5 * time.Minute} {
		old = binary.BigEndian.AppendUint64(old, uint64(now.Add(-ago).UnixNano()))
	}
	key := prefix + strconv.FormatUint(41, 36)
	if err := raw.HSet(ctx, key, "3", string(old)).Err(); err != nil {
		t.Fatal(err)
	}
	took := make([]int, 1)
	if _, err := r.Take(ctx, 41, now, []counters.Take{{Campaign: 3, Count: 3, Within: time.Hour}}, took, nil); err != nil || took[0] != 3 {
		t.Fatalf("a take over two serves of the hour in the old layout = %d, %v; want the third serve (3)", took[0], err)
	}
	if got, _ := r.Reached(ctx, 41, now, nil); len(got) != 1 || got[0].Until != now.Add(50*time.Minute).UnixNano() {
		t.Errorf("Reached = %v; want campaign 3 until the serve of 10 minutes ago leaves the hour (%d)", got, now.Add(50*time.Minute).UnixNano())
	}
	if n, _ := raw.HExists(ctx, key, "3").Result(); n {
		t.Error("the old field is still there after the take rewrote it")
	}
	if ttl, err := raw.PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > time.Hour {
		t.Errorf("the key's expiry = %v, %v; want at most the hour of its only cap", ttl, err)
	}
}

func TestMemoryMoney(t *testing.T) {
	ms := map[*testing.T]*counters.MemoryMoney{}
	counterstest.RunMoney(t, func(t *testing.T, _ int) counterstest.Money {
		if ms[t] == nil {
			ms[t] = counters.NewMemoryMoney(1000)
		}
		return ms[t]
	})
}

func TestRedisMoney(t *testing.T) {
	url := os.Getenv("MARQUEE_TEST_REDIS")
	if url == "" {
		t.Skip("MARQUEE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): the Redis money counters are not tested")
	}
	counterstest.RunMoney(t, func(t *testing.T, _ int) counterstest.Money {
		r, err := counters.NewRedis(url, prefixOf(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	})
}

// TestVelocity runs the shared velocity contract in memory and, with
// MARQUEE_TEST_REDIS, on Redis.
func TestVelocity(t *testing.T) {
	t.Run("memory", func(t *testing.T) { counterstest.Velocity(t, new(counters.MemoryCounts)) })
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("MARQUEE_TEST_REDIS")
		if url == "" {
			t.Skip("MARQUEE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): the Redis velocity counts are not tested")
		}
		r, err := counters.NewRedis(url, prefixOf(t))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		counterstest.Velocity(t, r)
	})
}
