package counters_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
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
