package counters

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/redis/go-redis/v9"
)

// Money counters (docs/api.md#budgets, #conversions): what campaigns and
// advertisers spent (spend counters, in nano-units of the currency, each
// day and over a life), and what each user's impressions of each
// advertiser left for post-view attribution (touches). MemoryMoney keeps
// them in this process (one instance); Redis in the server every
// instance shares. Both meet one contract (counterstest.RunMoney).

// Add is an amount added to a spend counter: Key's total grows by N; a
// counter with a TTL expires that long after its last add (a day's), one
// without never.
type Add struct {
	Key string
	N   int64
	TTL time.Duration
}

// Touch is what an impression ('i') or a viewable impression ('v') of an
// advertiser's ad left of a user for post-view attribution: when, and the
// decision's signed token (what the conversion is counted by), kept for
// TTL (the longest post-view window).
type Touch struct {
	User       uint64
	Advertiser int64
	Kind       byte
	At         int64 // unix seconds
	Verified   bool
	Token      []byte
	TTL        time.Duration
}

// Seen is a touch as read back: zero At when there is none.
type Seen struct {
	At       int64
	Verified bool
	Token    []byte
}

// encodeSeen is a touch's stored value: its time (8 bytes), whether it
// was verified (1 byte), then the token.
func encodeSeen(t *Touch) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 9+len(t.Token)), uint64(t.At))
	v := byte(0)
	if t.Verified {
		v = 1
	}
	return append(append(b, v), t.Token...)
}

func decodeSeen(b []byte) Seen {
	if len(b) < 9 {
		return Seen{}
	}
	return Seen{At: int64(binary.BigEndian.Uint64(b)), Verified: b[8] == 1, Token: b[9:]}
}

// MemoryMoney keeps spend counters and touches in this process: the
// spend in a map (a few keys a budgeted campaign), the touches in a
// bounded cache (maxTouches users × advertisers, least recently used
// first out). Safe for concurrent use.
type MemoryMoney struct {
	mu      sync.Mutex
	spend   map[string]spent
	touches *otter.Cache[touchKey, [2][]byte]
	now     func() time.Time
}

type spent struct {
	n       int64
	expires int64 // unix ns; 0 never
}

type touchKey struct {
	user       uint64
	advertiser int64
}

// NewMemoryMoney returns in-memory money counters keeping at most
// maxTouches users' touches of an advertiser.
func NewMemoryMoney(maxTouches int) *MemoryMoney {
	return &MemoryMoney{spend: map[string]spent{}, now: time.Now,
		touches: otter.Must(&otter.Options[touchKey, [2][]byte]{MaximumSize: maxTouches})}
}

// AddSpend adds adds to their counters and returns, in order, the totals
// of the adds' keys after them, then those of reads.
func (m *MemoryMoney) AddSpend(_ context.Context, adds []Add, reads []string) ([]int64, error) {
	now := m.now().UnixNano()
	out := make([]int64, 0, len(adds)+len(reads))
	m.mu.Lock()
	defer m.mu.Unlock()
	get := func(k string) spent {
		s := m.spend[k]
		if s.expires != 0 && s.expires <= now {
			s = spent{}
		}
		return s
	}
	for _, a := range adds {
		s := get(a.Key)
		s.n += a.N
		if a.TTL > 0 {
			s.expires = now + int64(a.TTL)
		}
		m.spend[a.Key] = s
		out = append(out, s.n)
	}
	for _, k := range reads {
		out = append(out, get(k).n)
	}
	if len(m.spend) > 1024 && len(adds) > 0 && now%64 == 0 { // now and then, drop the days gone
		for k, s := range m.spend {
			if s.expires != 0 && s.expires <= now {
				delete(m.spend, k)
			}
		}
	}
	return out, nil
}

// PutTouches keeps the touches (a later one of a kind replaces an
// earlier).
func (m *MemoryMoney) PutTouches(_ context.Context, ts []Touch) error {
	for i := range ts {
		t := &ts[i]
		k := touchKey{t.User, t.Advertiser}
		v, _ := m.touches.GetIfPresent(k)
		slot := 0
		if t.Kind == 'v' {
			slot = 1
		}
		if old := decodeSeen(v[slot]); old.At > t.At {
			continue
		}
		v[slot] = encodeSeen(t)
		m.touches.Set(k, v)
	}
	return nil
}

// Touches returns user's last impression and last viewable impression
// of advertiser's ads.
func (m *MemoryMoney) Touches(_ context.Context, user uint64, advertiser int64) (imp, view Seen, err error) {
	v, _ := m.touches.GetIfPresent(touchKey{user, advertiser})
	return decodeSeen(v[0]), decodeSeen(v[1]), nil
}

// Spend counters live under prefix+"s:"+key; a user's touches of an
// advertiser in the hash prefix+"t:"+user+":"+advertiser, fields "i"
// and "v".

// AddSpend adds adds to their counters and returns, in order, the totals
// of the adds' keys after them, then those of reads: one pipeline.
func (r *Redis) AddSpend(ctx context.Context, adds []Add, reads []string) ([]int64, error) {
	pipe := r.c.Pipeline()
	incrs := make([]*redis.IntCmd, len(adds))
	for i, a := range adds {
		incrs[i] = pipe.IncrBy(ctx, r.prefix+"s:"+a.Key, a.N)
		if a.TTL > 0 {
			pipe.Expire(ctx, r.prefix+"s:"+a.Key, a.TTL)
		}
	}
	gets := make([]*redis.StringCmd, len(reads))
	for i, k := range reads {
		gets[i] = pipe.Get(ctx, r.prefix+"s:"+k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, err
	}
	out := make([]int64, 0, len(adds)+len(reads))
	for _, c := range incrs {
		out = append(out, c.Val())
	}
	for _, c := range gets {
		n, err := c.Int64()
		if err != nil && err != redis.Nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// A Draw is one counter an amount is drawn from, against a limit: the
// counter reads as at least Floor (what the durable record says was
// spent: a counter lost and started again never lets a budget be spent
// twice), and the draw fits when the counter plus the amount stays at or
// under Limit (-1: no limit). A counter with a TTL expires that long
// after its last draw.
type Draw struct {
	Key   string
	Limit int64
	Floor int64
	TTL   time.Duration
}

// NoLimit is a Draw's Limit when the counter has none.
const NoLimit = -1

// Settle adds n to the counters of draws when every one of them stays
// within its limit, else to none — atomically, across every instance
// that shares the counters: however many settle at once, a counter never
// passes its limit. It returns whether n was added and, in the order of
// draws, the counters' totals after (or as they stand, refused).
func (m *MemoryMoney) Settle(_ context.Context, draws []Draw, n int64) (bool, []int64, error) {
	now := m.now().UnixNano()
	out := make([]int64, len(draws))
	m.mu.Lock()
	defer m.mu.Unlock()
	ok := true
	for i, d := range draws {
		s := m.spend[d.Key]
		if s.expires != 0 && s.expires <= now {
			s = spent{}
		}
		out[i] = max(s.n, d.Floor)
		if d.Limit != NoLimit && out[i]+n > d.Limit {
			ok = false
		}
	}
	if !ok {
		return false, out, nil
	}
	for i, d := range draws {
		out[i] += n
		s := spent{n: out[i]}
		if d.TTL > 0 {
			s.expires = now + int64(d.TTL)
		}
		m.spend[d.Key] = s
	}
	return true, out, nil
}

// settleScript is Settle in Redis. Lua's numbers are doubles (exact to
// 2^53 only), so totals stay Redis integers and compare as decimal
// strings: KEYS are the counters; ARGV[1] the amount, then each draw's
// limit, floor and TTL (ms). It answers the outcome (1 or 0), then each
// total.
var settleScript = redis.NewScript(`
local function gt(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end
local n, ok, out = ARGV[1], true, {}
for i, k in ipairs(KEYS) do
  local floor = ARGV[3*i]
  local c = redis.call('GET', k) or '0'
  if gt(floor, c) then redis.call('SET', k, floor, 'KEEPTTL') end
  redis.call('INCRBY', k, n)
  out[i] = redis.call('GET', k)
  local ttl = tonumber(ARGV[3*i+1])
  if ttl > 0 then redis.call('PEXPIRE', k, ttl) end
  local lim = ARGV[3*i-1]
  if lim ~= '-1' and gt(out[i], lim) then ok = false end
end
if not ok then
  for i, k in ipairs(KEYS) do
    redis.call('DECRBY', k, n)
    out[i] = redis.call('GET', k)
  end
  return {0, unpack(out)}
end
return {1, unpack(out)}`)

// Settle adds n to the counters of draws when every one of them stays
// within its limit, else to none, in one script (atomic across every
// instance): see MemoryMoney.Settle.
func (r *Redis) Settle(ctx context.Context, draws []Draw, n int64) (bool, []int64, error) {
	keys := make([]string, len(draws))
	args := make([]any, 1, 1+3*len(draws))
	args[0] = n
	for i, d := range draws {
		keys[i] = r.prefix + "s:" + d.Key
		args = append(args, d.Limit, max(d.Floor, 0), d.TTL.Milliseconds())
	}
	res, err := settleScript.Run(ctx, r.c, keys, args...).Slice()
	if err != nil {
		return false, nil, err
	}
	if len(res) != 1+len(draws) {
		return false, nil, errShortSettle
	}
	out := make([]int64, len(draws))
	for i, v := range res[1:] {
		s, _ := v.(string)
		if out[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return false, nil, errShortSettle
		}
	}
	ok, _ := res[0].(int64)
	return ok == 1, out, nil
}

var errShortSettle = errors.New("spend counters: a malformed settle answer")

// touchScript keeps a touch unless the one stored is later (two
// instances may write one user's touches out of order).
var touchScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and string.len(old) >= 8 and old > ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`)

func (r *Redis) touchKey(user uint64, advertiser int64) string {
	return r.prefix + "t:" + strconv.FormatUint(user, 36) + ":" + strconv.FormatInt(advertiser, 36)
}

// PutTouches keeps the touches (a later one of a kind replaces an
// earlier): one pipeline.
func (r *Redis) PutTouches(ctx context.Context, ts []Touch) error {
	pipe := r.c.Pipeline()
	for i := range ts {
		t := &ts[i]
		touchScript.Eval(ctx, pipe, []string{r.touchKey(t.User, t.Advertiser)}, string(t.Kind), encodeSeen(t), t.TTL.Milliseconds())
	}
	_, err := pipe.Exec(ctx)
	if err != nil && err != redis.Nil {
		return err
	}
	return nil
}

// Touches returns user's last impression and last viewable impression
// of advertiser's ads.
func (r *Redis) Touches(ctx context.Context, user uint64, advertiser int64) (imp, view Seen, err error) {
	vals, err := r.c.HMGet(ctx, r.touchKey(user, advertiser), "i", "v").Result()
	if err != nil {
		return imp, view, err
	}
	str := func(v any) []byte {
		s, _ := v.(string)
		return []byte(s)
	}
	return decodeSeen(str(vals[0])), decodeSeen(str(vals[1])), nil
}

// ForgetTouches forgets every touch of user (an erasure,
// docs/privacy.md), and says how many advertisers' it forgot.
func (m *MemoryMoney) ForgetTouches(_ context.Context, user uint64) (int, error) {
	n := 0
	for k := range m.touches.All() {
		if k.user == user {
			m.touches.Invalidate(k)
			n++
		}
	}
	return n, nil
}

// ForgetTouches forgets every touch of user (an erasure,
// docs/privacy.md): a scan of its keys, then their deletion.
func (r *Redis) ForgetTouches(ctx context.Context, user uint64) (int, error) {
	match := r.prefix + "t:" + strconv.FormatUint(user, 36) + ":*"
	n := 0
	iter := r.c.Scan(ctx, 0, match, 100).Iterator()
	for iter.Next(ctx) {
		if err := r.c.Del(ctx, iter.Val()).Err(); err != nil {
			return n, err
		}
		n++
	}
	return n, iter.Err()
}

// TouchEraser is what erasures call to forget a user's touches.
type TouchEraser struct {
	M interface {
		ForgetTouches(ctx context.Context, user uint64) (int, error)
	}
}

// Forget forgets user's touches (a Forgetter, for Eraser).
func (e TouchEraser) Forget(ctx context.Context, user uint64) (int, error) {
	return e.M.ForgetTouches(ctx, user)
}
