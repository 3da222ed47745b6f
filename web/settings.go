package web

import (
	"context"
	"strings"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/reports"
)

// SettingsStore is what the routes of the install's settings need of
// the store.
type SettingsStore interface {
	PutSetting(ctx context.Context, name, value string) error
}

// MaxSettingsBody bounds a setting's body.
const MaxSettingsBody = 4 << 10

// reportKeysBody is the answer of the report keys' routes.
type reportKeysBody struct {
	Keys []string `json:"keys"`
	Max  int      `json:"max"` // how many keys an install may choose
}

func answerReportKeys(ctx *fasthttp.RequestCtx, keys []string) {
	if keys == nil {
		keys = []string{}
	}
	writeJSON(ctx, fasthttp.StatusOK, reportKeysBody{keys, reports.MaxReportKeys})
}

// handleGetReportKeys serves GET /api/v1/settings/report-keys: the
// install's report keys, as this instance counts them.
func handleGetReportKeys(keys *reports.KeySet) storeHandler {
	return func(_ context.Context, ctx *fasthttp.RequestCtx) error {
		answerReportKeys(ctx, keys.Load())
		return nil
	}
}

// handlePutReportKeys serves PUT /api/v1/settings/report-keys
// ({"keys": […]}): the install's report keys replaced. Every instance
// applies them through the changelog: decisions made from then on carry
// their values in their tracking URLs, and their events are counted by
// them; what was counted by a key dropped stays in the reports.
func handlePutReportKeys(st SettingsStore, wr *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxSettingsBody, marquee.ParseReportKeysInput)
		if err != nil {
			return err
		}
		checked, err := reports.CheckReportKeys(in)
		if err != nil {
			return marquee.Invalid("invalid report keys", marquee.Problems{"keys": err.Error()})
		}
		err = st.PutSetting(marquee.WithAuditFields(sctx, []string{"keys"}), marquee.SettingReportKeys, strings.Join(checked, ","))
		if err := wr.visible(sctx, err, "setting"); err != nil {
			return err
		}
		answerReportKeys(ctx, checked)
		return nil
	}
}
