package counters

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
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
	// A decision waits for its counters: when Redis is down, failing at
	// once (capped campaigns left out) beats retrying and dialling again
	// with backoff until the decision's deadline (go-redis's defaults: 3
	// retries, 5 dials 100 ms apart). One dial; no retry unless the URL
	// asks for some (max_retries=N).
	opt.DialerRetries = 1
	if !strings.Contains(url, "max_retries=") {
		opt.MaxRetries = -1
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
		into = appendServes(into, f, v)
	}
	return into, nil
}

// forget deletes the hash KEYS[1] and returns how many serves it held:
// one atomic step.
var forget = redis.NewScript(`
local n = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do n = n + #v / 8 end
redis.call('DEL', KEYS[1])
return n
`)

// Forget drops every serve of user (an erased subject) on the server and
// returns how many there were: one round trip.
func (r *Redis) Forget(ctx context.Context, user uint64) (int, error) {
	n, err := forget.Run(ctx, r.c, []string{r.key(user)}).Int()
	return n, err
}

// appendServes appends to into the serves of one field of a user's hash:
// f the campaign, v its serves.
func appendServes(into []Serve, f, v string) []Serve {
	c, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return into
	}
	for i := 0; i+8 <= len(v); i += 8 {
		into = append(into, Serve{c, int64(binary.BigEndian.Uint64([]byte(v[i : i+8])))})
	}
	return into
}

// take records serves in hash KEYS[1] (the user; field: a campaign,
// value: its serves, 8 bytes each, big-endian unix ns, oldest first):
// ARGV[1] is now (8 bytes), ARGV[2] how many serves a field keeps, ARGV[3]
// the hash's expiry in ms; then, for each take, three arguments — the
// campaign, its cap, the window's start (unix ns). A take is refused when
// the cap's serves are after the window's start. It returns, for each
// take, the serves within the window once taken, or 0 when refused; after
// them, when one was refused, the hash's fields and values (the user's
// serves, for choosing again). One atomic step. (Lua's numbers are
// doubles: times compare to within a few hundred nanoseconds, far finer
// than any window.)
var take = redis.NewScript(`
local now, keep, out, refused = ARGV[1], tonumber(ARGV[2]) * 8, {}, false
for k = 4, #ARGV, 3 do
  local field, cap, since = ARGV[k], tonumber(ARGV[k + 1]), tonumber(ARGV[k + 2])
  local v = redis.call('HGET', KEYS[1], field) or ''
  local n = 0
  for i = 1, #v, 8 do
    local t = 0
    for j = i, i + 7 do t = t * 256 + string.byte(v, j) end
    if t > since then n = n + 1 end
  end
  if n >= cap then
    out[#out + 1] = 0
    refused = true
  else
    v = v .. now
    if #v > keep then v = string.sub(v, #v - keep + 1) end
    redis.call('HSET', KEYS[1], field, v)
    out[#out + 1] = n + 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if refused then
  for _, x in ipairs(redis.call('HGETALL', KEYS[1])) do out[#out + 1] = x end
end
return out
`)

// Take records, for each of takes, a serve of its campaign to user at now
// unless the cap is reached, as Memory.Take does: one round trip (a Lua
// script), atomic on the server.
func (r *Redis) Take(ctx context.Context, user uint64, now time.Time, takes []Take, took []int, seen []Serve) ([]Serve, error) {
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(now.UnixNano()))
	ttl := r.ttl
	for _, tk := range takes {
		ttl = max(ttl, tk.Within)
	}
	args := make([]any, 0, 3+3*len(takes))
	args = append(args, string(t[:]), Keep, ttl.Milliseconds())
	for _, tk := range takes {
		args = append(args, strconv.FormatInt(tk.Campaign, 10), tk.Count, now.Add(-tk.Within).UnixNano())
	}
	res, err := take.Run(ctx, r.c, []string{r.key(user)}, args...).Slice()
	if err != nil {
		return seen, err
	}
	if len(res) < len(takes) || (len(res)-len(takes))%2 != 0 {
		return seen, fmt.Errorf("counters: the take script answered %d values for %d takes", len(res), len(takes))
	}
	for i := range takes {
		n, ok := res[i].(int64)
		if !ok {
			return seen, fmt.Errorf("counters: the take script answered %T for a take", res[i])
		}
		took[i] = int(n)
	}
	for i := len(takes); i+1 < len(res); i += 2 { // the user's hash, after a refusal
		f, _ := res[i].(string)
		v, _ := res[i+1].(string)
		seen = appendServes(seen, f, v)
	}
	return seen, nil
}
