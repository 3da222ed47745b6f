package storetest

import (
	"context"
	"testing"

	"marquee"
)

// testSettings: a setting never set reads as unset; a put is read back
// by another handle, replaced by the next, and logged in the changelog
// by its name.
func testSettings(t *testing.T, open Opener) {
	ctx := context.Background()
	st, again := open(t)
	if v, ok, err := st.Setting(ctx, marquee.SettingReportKeys); err != nil || ok || v != "" {
		t.Fatalf("Setting of a new store = %q, %v, %v; want unset", v, ok, err)
	}
	before, err := st.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"section,pos", "", "pos"} {
		if err := st.PutSetting(ctx, marquee.SettingReportKeys, v); err != nil {
			t.Fatalf("PutSetting(%q) = %v", v, err)
		}
		if got, ok, err := again().Setting(ctx, marquee.SettingReportKeys); err != nil || !ok || got != v {
			t.Errorf("Setting after PutSetting(%q) = %q, %v, %v; want it, set", v, got, ok, err)
		}
	}
	chs, err := st.Changes(ctx, before, 100)
	if err != nil || len(chs) != 3 {
		t.Fatalf("changes after 3 puts = %+v, %v; want 3", chs, err)
	}
	for _, c := range chs {
		if c.Entity != marquee.EntitySetting || c.Key != marquee.SettingReportKeys || c.Op != marquee.OpPut {
			t.Errorf("change = %+v; want a put of setting %s", c, marquee.SettingReportKeys)
		}
	}
}
