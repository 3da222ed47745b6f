package counters

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keeps the serves in a Redis server shared by every instance: one
// hash per user (a field a capped campaign), expiring when the longest
// window of its caps has passed since its last serve. Take runs one Lua
// script, so that its check and its write are one atomic step. What
// bounds its memory is the server's maxmemory with an eviction policy
// for keys with an expiry (volatile-lru, volatile-lfu, allkeys-…):
// docs/operations.md says what an evicted user means.
type Redis struct {
	c      *redis.Client
	prefix string
}

// NewRedis connects to the Redis of url (redis://host:port/db), with keys
// under prefix.
func NewRedis(url, prefix string) (*Redis, error) {
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
	return &Redis{c: redis.NewClient(opt), prefix: prefix}, nil
}

// Close closes the connections.
func (r *Redis) Close() error { return r.c.Close() }

// Ping checks the server answers.
func (r *Redis) Ping(ctx context.Context) error { return r.c.Ping(ctx).Err() }

func (r *Redis) key(user uint64) string { return r.prefix + strconv.FormatUint(user, 36) }

// A user's hash holds, for each capped campaign, a field "c<id>" whose
// value is 8-byte big-endian doubles: until (unix ms; the cap is reached
// before it), the cap's count, its window (ms), then the serves' times
// (unix ms, oldest first) inside the window — whole milliseconds, which
// Lua's doubles hold exactly. Fields named by the bare id are the layout
// before it (8-byte unix ns times only): a take reads them once and
// rewrites them.

// reachedOf (Lua) appends to out the reached caps of the hash KEYS[1] at
// now: campaign, until, count and window of each field whose until is
// past now; and deletes the fields whose serves have all left their
// window.
const reachedOf = `
local function reachedOf(now, out)
  local h = redis.call('HGETALL', KEYS[1])
  for i = 1, #h, 2 do
    local f, v = h[i], h[i + 1]
    if string.sub(f, 1, 1) == 'c' and #v >= 24 then
      local untilT, cap, within = struct.unpack('>ddd', v)
      local last = 0
      if #v >= 32 then last = struct.unpack('>d', v, #v - 7) end
      if untilT > now then
        out[#out + 1] = string.sub(f, 2)
        out[#out + 1] = untilT
        out[#out + 1] = cap
        out[#out + 1] = within
      elseif last + within <= now then
        redis.call('HDEL', KEYS[1], f)
      end
    end
  end
  return out
end
`

// reached: ARGV[1] is now (unix ms); it answers the user's reached caps,
// four values each.
var reached = redis.NewScript(reachedOf + `return reachedOf(tonumber(ARGV[1]), {})`)

// Reached appends to into the caps user has reached at now, sorted by
// campaign: one round trip.
func (r *Redis) Reached(ctx context.Context, user uint64, now time.Time, into []Reached) ([]Reached, error) {
	res, err := reached.Run(ctx, r.c, []string{r.key(user)}, now.UnixMilli()).Slice()
	if err != nil {
		return into, err
	}
	return appendReached(into, res)
}

// appendReached appends the reached caps of a script's answer (four
// values each), sorted by campaign.
func appendReached(into []Reached, res []any) ([]Reached, error) {
	if len(res)%4 != 0 {
		return into, fmt.Errorf("counters: %d values for reached caps, not groups of four", len(res))
	}
	from := len(into)
	for i := 0; i+3 < len(res); i += 4 {
		id, _ := res[i].(string)
		c, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return into, fmt.Errorf("counters: a reached cap's campaign %q", id)
		}
		until, _ := res[i+1].(int64)
		count, _ := res[i+2].(int64)
		within, _ := res[i+3].(int64)
		into = append(into, Reached{Campaign: c, Until: until * 1e6, Count: int(count), Within: time.Duration(within) * time.Millisecond})
	}
	slices.SortFunc(into[from:], func(a, b Reached) int { return cmp.Compare(a.Campaign, b.Campaign) })
	return into, nil
}

// forget deletes the hash KEYS[1] and returns how many serves it held:
// one atomic step.
var forget = redis.NewScript(`
local n = 0
local h = redis.call('HGETALL', KEYS[1])
for i = 1, #h, 2 do
  if string.sub(h[i], 1, 1) == 'c' then n = n + math.max(#h[i + 1] - 24, 0) / 8 else n = n + #h[i + 1] / 8 end
end
redis.call('DEL', KEYS[1])
return n
`)

// Forget drops every serve of user (an erased subject) on the server and
// returns how many there were: one round trip.
func (r *Redis) Forget(ctx context.Context, user uint64) (int, error) {
	n, err := forget.Run(ctx, r.c, []string{r.key(user)}).Int()
	return n, err
}

// take records serves in the hash KEYS[1]: ARGV[1] is now (unix ms),
// ARGV[2] how many serves a field keeps, ARGV[3] the hash's expiry in ms
// (extended, never shortened); then, for each take, three arguments — the
// campaign, its cap, its window (ms). A take is refused when the cap's
// serves are inside the window. It answers, for each take, the serves
// within the window once taken, or 0 when refused; after them, when one
// was refused, the user's reached caps. One atomic step.
var take = redis.NewScript(reachedOf + `
local now, keep, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out, refused = {}, false
for k = 4, #ARGV, 3 do
  local id, cap, within = ARGV[k], tonumber(ARGV[k + 1]), tonumber(ARGV[k + 2])
  local field, times = 'c' .. id, {}
  local v = redis.call('HGET', KEYS[1], field)
  if v then
    for i = 25, #v - 7, 8 do
      local t = struct.unpack('>d', v, i)
      if t > now - within then times[#times + 1] = t end
    end
  else
    local old = redis.call('HGET', KEYS[1], id)
    if old then
      for i = 1, #old - 7, 8 do
        local t = 0
        for j = i, i + 7 do t = t * 256 + string.byte(old, j) end
        t = math.floor(t / 1e6 + 0.5) -- to the nearest ms (the doubles hold ns to ~256 ns)
        if t > now - within then times[#times + 1] = t end
      end
      redis.call('HDEL', KEYS[1], id)
    end
  end
  local limit = math.min(cap, keep)
  if #times < limit then
    times[#times + 1] = now
    out[#out + 1] = #times
  else
    out[#out + 1] = 0
    refused = true
  end
  local untilT = 0
  if #times >= limit then untilT = times[#times - limit + 1] + within end
  local parts = {struct.pack('>ddd', untilT, cap, within)}
  for _, t in ipairs(times) do parts[#parts + 1] = struct.pack('>d', t) end
  redis.call('HSET', KEYS[1], field, table.concat(parts))
end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
if refused then reachedOf(now, out) end
return out
`)

// Take records, for each of takes, a serve of its campaign to user at now
// unless the cap is reached, as Memory.Take does: one round trip (a Lua
// script), atomic on the server. The key expires when the longest window
// of its caps has passed since its last serve.
func (r *Redis) Take(ctx context.Context, user uint64, now time.Time, takes []Take, took []int, reached []Reached) ([]Reached, error) {
	var ttl time.Duration
	for _, tk := range takes {
		ttl = max(ttl, tk.Within)
	}
	args := make([]any, 0, 3+3*len(takes))
	args = append(args, now.UnixMilli(), Keep, max(ttl.Milliseconds(), 1))
	for _, tk := range takes {
		args = append(args, strconv.FormatInt(tk.Campaign, 10), tk.Count, tk.Within.Milliseconds())
	}
	res, err := take.Run(ctx, r.c, []string{r.key(user)}, args...).Slice()
	if err != nil {
		return reached, err
	}
	if len(res) < len(takes) {
		return reached, fmt.Errorf("counters: the take script answered %d values for %d takes", len(res), len(takes))
	}
	for i := range takes {
		n, ok := res[i].(int64)
		if !ok {
			return reached, fmt.Errorf("counters: the take script answered %T for a take", res[i])
		}
		took[i] = int(n)
	}
	return appendReached(reached, res[len(takes):])
}

// Bound reads the memory limit and eviction policy of the server
// (CONFIG GET maxmemory, maxmemory-policy): what bounds the caps' keys.
// A server that refuses CONFIG answers an error.
func (r *Redis) Bound(ctx context.Context) (maxBytes int64, policy string, err error) {
	m, err := r.c.ConfigGet(ctx, "maxmemory").Result()
	if err != nil {
		return 0, "", err
	}
	p, err := r.c.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		return 0, "", err
	}
	maxBytes, _ = strconv.ParseInt(m["maxmemory"], 10, 64)
	return maxBytes, p["maxmemory-policy"], nil
}
