package web

import (
	"context"

	"github.com/valyala/fasthttp"

	"marquee"
)

// handleSetupState serves GET /api/v1/setup: {"needed": true} while the
// store has no user (the console's sign-in page then says how to set up).
func handleSetupState(st AccessStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		has, err := st.HasUsers(sctx)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]bool{"needed": !has})
		return nil
	}
}

// handleSetup serves POST /api/v1/setup: with the token of the setup link
// marquee serve printed, makes the first owner and signs them in (201,
// as a sign-in answers). Refused (409) once any user exists.
func handleSetup(a *sessions) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, MaxAccessBody, marquee.ParseSetupInput)
		if err != nil {
			return err
		}
		si, err := a.auth.Setup(sctx, a.access, in.Token, in.Email, in.Password, a.ip(ctx), a.now())
		if err != nil {
			return err
		}
		return a.answerSignedIn(sctx, ctx, si)
	}
}
