package counters_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
	m := counters.NewMemory()
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
		r, err := counters.NewRedis(url, prefix, time.Hour)
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
		r, err := counters.NewRedis(url, prefixOf(t), time.Hour)
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
