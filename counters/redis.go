package counters

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keeps the serves in a Redis server shared by every instance: one
// hash per user (field: campaign id; value: the serves' unix ns, 8 bytes
// each, oldest first), expiring a while after its last serve. Take runs
// one Lua script, so that its check and its write are one atomic step.
type Redis struct {
	c      *redis.Client
	prefix string
	ttl    time.Duration
}

// NewRedis connects to the Redis of url (redis://host:port/db), with keys
// under prefix, each user's kept ttl after their last serve (at least the
// longest cap window).
func NewRedis(url, prefix string, ttl time.Duration) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	return &Redis{c: redis.NewClient(opt), prefix: prefix, ttl: ttl}, nil
}

// Close closes the connections.
func (r *Redis) Close() error { return r.c.Close() }

// Ping checks the server answers.
func (r *Redis) Ping(ctx context.Context) error { return r.c.Ping(ctx).Err() }

func (r *Redis) key(user uint64) string { return r.prefix + strconv.FormatUint(user, 36) }

// Seen appends to into the times user was served each campaign: one
// HGETALL.
func (r *Redis) Seen(ctx context.Context, user uint64, into []Serve) ([]Serve, error) {
	h, err := r.c.HGetAll(ctx, r.key(user)).Result()
	if err != nil {
		return into, err
	}
	for f, v := range h {
		c, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			continue
		}
		for i := 0; i+8 <= len(v); i += 8 {
			into = append(into, Serve{c, int64(binary.BigEndian.Uint64([]byte(v[i : i+8])))})
		}
	}
	return into, nil
}

// take appends ARGV[3] (8 bytes: now, big-endian unix ns) to field
// ARGV[6] (the campaign) of hash KEYS[1] (the user) unless ARGV[1] serves
// there are after ARGV[2] (the window's start, unix ns); keeps the last
// ARGV[4] serves; sets the hash's expiry to ARGV[5] ms. Returns 1 when it
// took the serve. (Lua's numbers are doubles: times compare to within a
// few hundred nanoseconds, far finer than any window.)
var take = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[6]) or ''
local since, n = tonumber(ARGV[2]), 0
for i = 1, #v, 8 do
  local t = 0
  for j = i, i + 7 do t = t * 256 + string.byte(v, j) end
  if t > since then n = n + 1 end
end
if n >= tonumber(ARGV[1]) then return 0 end
v = v .. ARGV[3]
local keep = tonumber(ARGV[4]) * 8
if #v > keep then v = string.sub(v, #v - keep + 1) end
redis.call('HSET', KEYS[1], ARGV[6], v)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

// Take records a serve of campaign to user at now unless user had count
// serves of it since now − within, atomically on the server.
func (r *Redis) Take(ctx context.Context, user uint64, campaign int64, count int, within time.Duration, now time.Time) (bool, error) {
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(now.UnixNano()))
	n, err := take.Run(ctx, r.c, []string{r.key(user)}, count, now.Add(-within).UnixNano(), string(t[:]), Keep,
		max(r.ttl, within).Milliseconds(), strconv.FormatInt(campaign, 10)).Int()
	return n == 1, err
}
