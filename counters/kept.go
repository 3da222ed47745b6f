package counters

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Values kept for other instances (a demand partner's winning markup,
// its billing notice): a key's bytes under the prefix, for a while.

// Keep sets key's value for ttl.
func (r *Redis) Keep(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	return r.c.Set(ctx, r.prefix+key, v, ttl).Err()
}

// Fetch is key's value, and whether there is one.
func (r *Redis) Fetch(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := r.c.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return v, err == nil, err
}

// TakeKept is key's value, deleted at once (GETDEL): of many instances that
// take it, one gets it.
func (r *Redis) TakeKept(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := r.c.GetDel(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return v, err == nil, err
}
