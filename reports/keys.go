package reports

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"marquee"
)

// MaxReportKeys bounds the report keys: each is a dimension of the
// report tables, and rides in every tracking URL.
const MaxReportKeys = 3

// ParseReportKeys checks report keys (the setting marquee.SettingReportKeys
// and -report-keys): up to MaxReportKeys publisher keys (marquee.KVKey,
// at most 20 bytes), comma-separated, each once; "" none.
func ParseReportKeys(s string) ([]string, error) {
	var keys []string
	for k := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(k) != "" {
			keys = append(keys, k)
		}
	}
	return CheckReportKeys(keys)
}

// CheckReportKeys checks a list of report keys as ParseReportKeys does,
// and returns them as keys (lower-cased).
func CheckReportKeys(in []string) ([]string, error) {
	keys := []string{}
	for _, k := range in {
		key, ok := marquee.KVKey(k)
		if !ok || len(key) > 20 {
			return nil, fmt.Errorf("%q is not a key: 1 to 20 bytes of a-z, 0-9, _, . and -", k)
		}
		if slices.Contains(keys, key) {
			return nil, fmt.Errorf("%q is given twice", key)
		}
		keys = append(keys, key)
	}
	if len(keys) > MaxReportKeys {
		return nil, fmt.Errorf("%d keys: at most %d (each is a dimension of every report table and rides in every tracking URL)", len(keys), MaxReportKeys)
	}
	return keys, nil
}

// KeySet holds the report keys an instance counts and reads now: the
// decisions' tracking URLs carry their values, the Tally and ClickHouse
// count events by them, and reports are read by=kv.KEY of them. Readers
// load it once per use without locking; Set replaces it (the install's
// setting, applied on every instance by From). The zero KeySet holds no
// keys; a nil *KeySet reads as none.
type KeySet struct{ p atomic.Pointer[[]string] }

// NewKeySet returns a KeySet holding keys (checked by ParseReportKeys).
func NewKeySet(keys []string) *KeySet {
	k := &KeySet{}
	k.Set(keys)
	return k
}

// Load returns the keys; the slice is never changed after Set.
func (k *KeySet) Load() []string {
	if k == nil {
		return nil
	}
	if p := k.p.Load(); p != nil {
		return *p
	}
	return nil
}

// Set replaces the keys (a copy is kept).
func (k *KeySet) Set(keys []string) { keys = slices.Clone(keys); k.p.Store(&keys) }

// Settings is the store's side of the install's settings.
type Settings interface {
	Setting(ctx context.Context, name string) (value string, ok bool, err error)
	PutSetting(ctx context.Context, name, value string) error
}

// LoadKeys reads the install's report keys from st into k. When none
// were ever set, the keys given at start (-report-keys) are stored as
// the install's, so that an install upgraded from the flag keeps
// counting them; once set (the console, PUT /api/v1/settings/report-keys)
// the stored keys win, and it returns the flag's keys it ignored when
// they differ ("" when they do not).
func (k *KeySet) LoadKeys(ctx context.Context, st Settings, flag []string) (ignored string, err error) {
	v, ok, err := st.Setting(ctx, marquee.SettingReportKeys)
	if err != nil {
		return "", err
	}
	if !ok {
		if len(flag) > 0 {
			if err := st.PutSetting(ctx, marquee.SettingReportKeys, strings.Join(flag, ",")); err != nil {
				return "", err
			}
		}
		k.Set(flag)
		return "", nil
	}
	keys, err := ParseReportKeys(v)
	if err != nil {
		return "", fmt.Errorf("stored report keys %q: %w", v, err)
	}
	k.Set(keys)
	if len(flag) > 0 && !slices.Equal(flag, keys) {
		return strings.Join(flag, ","), nil
	}
	return "", nil
}

// From is the marquee.Applier that keeps k in step with the install's
// setting: read again on a reload and when a batch names it.
func (k *KeySet) From(st Settings) marquee.Applier {
	return marquee.ApplyFunc(func(ctx context.Context, b *marquee.Batch) error {
		if !b.Reload && !slices.Contains(b.Settings, marquee.SettingReportKeys) {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		v, ok, err := st.Setting(ctx, marquee.SettingReportKeys)
		if err != nil || !ok {
			return err
		}
		// Only a checked value is ever stored (PUT checks it); were one
		// not, the keys in use stay rather than the feed stalling on it.
		if keys, err := ParseReportKeys(v); err == nil {
			k.Set(keys)
		}
		return nil
	})
}
