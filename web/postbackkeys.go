package web

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
)

// An advertiser's postback keys (docs/api.md#postback-keys): the keys its
// server posts conversions with — bound to the advertiser, holding
// conversions:write and nothing else — which the advertiser's own account
// (or the team) makes, lists and revokes without keys:admin. The secret
// is shown once, when made.

// postbackKey says whether k is a live postback key of advertiser id.
func postbackKey(k marquee.APIKey, id int64) bool {
	return k.RevokedAt == nil && slices.Equal(k.Advertisers, marquee.IDs{id}) && len(k.Sites) == 0 &&
		k.Scopes == postbackScopes
}

// postbackScopes are a postback key's scopes.
var postbackScopes, _, _ = marquee.ParseScopes([]string{string(marquee.ScopeConversionsWrite)})

// notPostOnly guards the routes that make credentials of an advertiser
// (its postback keys, its conversion secret): a credential that holds no
// more than a postback key's scopes — a postback key, or a session
// opened with one — is refused (403), so that a leaked server key cannot
// mint the keys that would outlive its revocation.
func notPostOnly(next storeHandler) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		if p := principal(ctx); postbackScopes.Contains(p.Scopes) {
			return marquee.Errorf(marquee.KindForbidden,
				"a credential that only posts conversions cannot make or read keys and secrets: use a signed-in session or a key with more scopes")
		}
		return next(sctx, ctx)
	}
}

// revokeKey revokes key id and every live key made by it (its children,
// and theirs): a key's revocation ends what it made.
func revokeKey(sctx context.Context, st AccessStore, id int64) error {
	if err := st.RevokeKey(sctx, id); err != nil {
		return err
	}
	keys, err := st.Keys(sctx)
	if err != nil {
		return err
	}
	for todo := []int64{id}; len(todo) > 0; todo = todo[1:] {
		maker := "key:" + strconv.FormatInt(todo[0], 10) + " "
		for i := range keys {
			if k := &keys[i]; k.RevokedAt == nil && strings.HasPrefix(k.CreatedBy, maker) && k.ID != id {
				if err := st.RevokeKey(sctx, k.ID); err != nil && marquee.KindOf(err) != marquee.KindNotFound {
					return err
				}
				now := time.Now()
				k.RevokedAt = &now
				todo = append(todo, k.ID)
			}
		}
	}
	return nil
}

// handleCreatePostbackKey serves POST /api/v1/advertisers/{id}/postback-keys
// (its ownership checked before): 201 with the new key and, this once,
// its secret.
func handleCreatePostbackKey(st AccessStore, campaigns CampaignStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		a, err := campaigns.Advertiser(sctx, id)
		if err != nil {
			return err
		}
		p := principal(ctx)
		secret, hash := auth.NewSecret(auth.KeyPrefix)
		k, err := st.CreateKey(marquee.WithAuditFields(sctx, []string{"name", "scopes", "advertisers"}),
			marquee.APIKey{Name: "postback: " + a.Name, Prefix: secret[:auth.PrefixLen], Scopes: postbackScopes, Bounds: marquee.Bounds{Advertisers: marquee.IDs{id}}, CreatedBy: p.Actor}, hash)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusCreated, keyCreated{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes.List(), Bounds: k.Bounds,
			CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, Key: secret})
		return nil
	}
}

// handleListPostbackKeys serves GET /api/v1/advertisers/{id}/postback-keys:
// the advertiser's live postback keys (never their secrets).
func handleListPostbackKeys(st AccessStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		keys, err := st.Keys(sctx)
		if err != nil {
			return err
		}
		out := []marquee.APIKey{}
		for _, k := range keys {
			if postbackKey(k, id) {
				out = append(out, k)
			}
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"keys": out})
		return nil
	}
}

// handleRevokePostbackKey serves DELETE
// /api/v1/advertisers/{id}/postback-keys/{key}: 204; a key that is not one
// of the advertiser's live postback keys is a 404.
func handleRevokePostbackKey(st AccessStore, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		id, err := pathID(ctx, "advertiser")
		if err != nil {
			return err
		}
		keyID, err := strconv.ParseInt(string(pathParam(ctx, 1)), 10, 64)
		if err != nil {
			return marquee.Errorf(marquee.KindNotFound, "postback key not found")
		}
		k, err := st.Key(sctx, keyID)
		if marquee.KindOf(err) == marquee.KindNotFound || err == nil && !postbackKey(k, id) {
			return marquee.Errorf(marquee.KindNotFound, "postback key not found")
		}
		if err != nil {
			return err
		}
		if err := w.visible(sctx, revokeKey(sctx, st, keyID), "key"); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}
