package web

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/valyala/fasthttp"

	"marquee"
)

// storeTimeout bounds the store calls of one request, and every load of a
// cache (see bounded).
const storeTimeout = 5 * time.Second

// storeHandler is a handler that calls the store, with a context that
// bounds those calls.
type storeHandler func(sctx context.Context, ctx *fasthttp.RequestCtx) error

// withStore gives h a context that ends after storeTimeout.
func withStore(h storeHandler) handler { return withStoreFor(storeTimeout, h) }

// withStoreFor is withStore with a store deadline of d, for a route that
// reads or checks every link (an import's checks, an export).
func withStoreFor(d time.Duration, h storeHandler) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		sctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return h(sctx, ctx)
	}
}

// Syncer makes committed changes visible in this instance's index and
// caches (the changelog feed).
type Syncer interface {
	Sync(ctx context.Context) error
}

// writer makes a client's successful write visible to its next request on
// this instance (read-your-writes): it returns once the feed has applied
// what was committed. The feed is the only writer of the index and the
// caches: it applies every instance's changes in commit order.
type writer struct {
	feed Syncer
	log  *slog.Logger
}

// visible waits, after a successful write (err nil), until the feed has
// applied it, and returns err. The write has succeeded either way: if the
// wait fails (the store went away right after the commit), the feed
// applies it when the store is back.
func (w *writer) visible(ctx context.Context, err error, what string) error {
	if err != nil {
		return err
	}
	if serr := w.feed.Sync(ctx); serr != nil {
		w.log.Warn("written but not yet visible on this instance", "what", what, "err", serr)
	}
	return nil
}

// resource is what the generic handlers need to know of a stored
// resource named by its path: what it is called in the log, how its key
// parses from the path (a key that cannot be one is a 404), and how its
// body is read (at most limit bytes of JSON).
type resource[K, In any] struct {
	what  string
	key   func(*fasthttp.RequestCtx) (K, error)
	limit int
	parse func([]byte) (In, error)
}

var adResource = resource[int64, marquee.AdInput]{"ad", adID, MaxAdBody, marquee.ParseAdInput}

// checked is r whose bodies are also checked by check, which names more
// problems (beside the parser's, in one answer).
func (r resource[K, In]) checked(check func(*In) marquee.Problems) resource[K, In] {
	parse := r.parse
	r.parse = func(b []byte) (In, error) {
		in, err := parse(b)
		return in, withProblems(err, r.what, check(&in))
	}
	return r
}

// withProblems is err with more problems of what beside its own, in one
// answer: err's when it names problems already, a new KindInvalid error
// when err is nil, err alone when it is another kind (a body too large,
// not JSON: said first).
func withProblems(err error, what string, more marquee.Problems) error {
	if len(more) == 0 {
		return err
	}
	if e := marquee.AsError(err); e != nil && e.Kind == marquee.KindInvalid {
		maps.Copy(e.Problems, more)
		return e
	}
	if err != nil {
		return err
	}
	return marquee.Invalid("invalid "+what, more)
}

// geoRules names, on a server whose GeoIP places nothing below the
// country (no -geoip City database), the rules of a targeting tree that
// read what only such a database finds.
func geoRules(places bool, t *marquee.Targeting) marquee.Problems {
	if places || !t.Uses(marquee.KeyRegion, marquee.KeyCity, marquee.KeyMetro) {
		return nil
	}
	return marquee.Problems{"targeting": "reads $region, $city or $metro, which need a GeoIP database: start the server with -geoip (a MaxMind-format City database)"}
}

// moneyRules refuses a price or a budget in a currency other than the
// install's (one currency per install: docs/api.md#money).
func moneyRules(install string, p *marquee.Price, b *marquee.Budget) marquee.Problems {
	out := marquee.Problems{}
	if p != nil {
		if msg := marquee.CheckCurrency(p.Currency, install); msg != "" {
			out["price.currency"] = msg
		}
	}
	if b != nil {
		if msg := marquee.CheckCurrency(b.Currency, install); msg != "" {
			out["budget.currency"] = msg
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// merge is the problems of a and b together (nil: none).
func merge(a, b marquee.Problems) marquee.Problems {
	if len(a) == 0 {
		return b
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// linkResource is a link on domains: named by its code and ?domain=, its
// body's domain one of them.
func linkResource(domains *LinkDomains) resource[string, marquee.LinkInput] {
	return resource[string, marquee.LinkInput]{"link", domains.linkKey, MaxLinkBody, domains.parseLink}
}

// handleCreate serves POST of a resource: 201 with the Location and body
// that answer gives for what create stored, once it is visible here.
func handleCreate[S, K, In, Out any](r resource[K, In], store S, create func(S, context.Context, In) (Out, error), w *writer,
	answer func(Out) (location string, body any)) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		in, err := readJSON(ctx, r.limit, r.parse)
		if err != nil {
			return err
		}
		v, err := create(store, marquee.WithAuditFields(sctx, changed(nil, &in)), in)
		if err := w.visible(sctx, err, r.what); err != nil {
			return err
		}
		writeCreated(ctx, answer, v)
		return nil
	}
}

// writeCreated answers 201 with what answer says of v, the created
// resource: its body and location.
func writeCreated[T any](ctx *fasthttp.RequestCtx, answer func(T) (location string, body any), v T) {
	location, body := answer(v)
	ctx.Response.Header.Set(fasthttp.HeaderLocation, location)
	writeJSON(ctx, fasthttp.StatusCreated, body)
}

// handleReplace serves PUT of a resource: the body is a whole resource,
// and the answer is 200 with what replace stored, once it is visible
// here. replace is a method expression of the store (AdStore.ReplaceAd),
// so that a server built without a store still builds its routes; prior
// reads what the resource is now, for the audit log's changed fields.
func handleReplace[S, K, In, Out any](r resource[K, In], store S, replace func(S, context.Context, K, In) (Out, error),
	prior func(S, context.Context, K) (In, error), w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		k, err := r.key(ctx)
		if err != nil {
			return err
		}
		in, err := readJSON(ctx, r.limit, r.parse)
		if err != nil {
			return err
		}
		old, err := prior(store, sctx, k)
		if err != nil {
			return err
		}
		v, err := replace(store, marquee.WithAuditFields(sctx, changed(&old, &in)), k, in)
		if err := w.visible(sctx, err, r.what); err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, v)
		return nil
	}
}

// handleDelete serves DELETE of a resource: 204 once the deletion is
// visible here.
func handleDelete[S, K, In any](r resource[K, In], store S, del func(S, context.Context, K) error, w *writer) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		k, err := r.key(ctx)
		if err != nil {
			return err
		}
		if err := w.visible(sctx, del(store, sctx, k), r.what); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// readJSON checks a body's type and size (see checkJSONBody), then parses
// it with parse.
func readJSON[T any](ctx *fasthttp.RequestCtx, limit int, parse func([]byte) (T, error)) (T, error) {
	if err := checkJSONBody(ctx, limit); err != nil {
		var zero T
		return zero, err
	}
	return parse(ctx.PostBody())
}

// checkJSONBody refuses a body whose declared type is not JSON (415) or
// that is larger than limit bytes (413). A body with no Content-Type is
// read as JSON.
func checkJSONBody(ctx *fasthttp.RequestCtx, limit int) error {
	return checkBody(ctx, limit, func(media []byte) bool {
		return bytes.Equal(media, contentTypeJSON) || bytes.HasSuffix(media, []byte("+json"))
	}, "content type %q is not JSON; send application/json")
}

// checkBody refuses a body whose declared media type (lower-cased, without
// parameters) accepts refuses — 415 with refusal, a format taking the
// Content-Type — or that is larger than limit bytes (413). A body with no
// Content-Type passes.
func checkBody(ctx *fasthttp.RequestCtx, limit int, accepts func(media []byte) bool, refusal string) error {
	if ct := ctx.Request.Header.ContentType(); len(ct) > 0 {
		media, _, _ := bytes.Cut(ct, []byte(";"))
		if media = bytes.TrimSpace(media); bytes.ContainsFunc(media, unicode.IsUpper) {
			media = bytes.ToLower(media) // the rare spelling: the usual one is not copied
		}
		if !accepts(media) {
			return marquee.Errorf(marquee.KindUnsupportedMedia, refusal, ct)
		}
	}
	if n := len(ctx.PostBody()); n > limit {
		return marquee.Errorf(marquee.KindTooLarge, "request body is %d bytes; the limit is %d", n, limit)
	}
	return nil
}

// audited gives h's store calls the audit of the request (who, from
// where, and the action its method names), which the store records with
// every change they make.
func (r requester) audited(h storeHandler) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		action := "create"
		switch {
		case ctx.IsPut():
			action = "replace"
		case ctx.IsDelete():
			action = "delete"
		}
		return h(r.audit(sctx, ctx, action, nil), ctx)
	}
}

// auditedAs is audited for a route whose change is action (pause,
// resume, archive, import): what happened, not the HTTP method.
func (r requester) auditedAs(action string, h storeHandler) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		return h(r.audit(sctx, ctx, action, nil), ctx)
	}
}

// changed names (by their JSON names) the fields of *new that differ
// from *old, or, with no old, that are set. Both are structs of one
// type.
func changed[T any](old, new *T) []string {
	nv := reflect.ValueOf(new).Elem()
	var ov reflect.Value
	if old != nil {
		ov = reflect.ValueOf(old).Elem()
	}
	fields := []string{}
	for i := range nv.NumField() {
		f := nv.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		a := nv.Field(i).Interface()
		var same bool
		if old == nil {
			same = nv.Field(i).IsZero()
		} else if t, ok := a.(time.Time); ok {
			same = t.Equal(ov.Field(i).Interface().(time.Time))
		} else {
			same = reflect.DeepEqual(a, ov.Field(i).Interface())
		}
		if !same {
			fields = append(fields, name)
		}
	}
	return fields
}

// adInput and linkInput read what an ad or link is now (handleReplace's
// prior).
func adInput(st AdStore, ctx context.Context, id int64) (marquee.AdInput, error) {
	a, err := st.Ad(ctx, id)
	return a.Input(), err
}

func linkInput(st LinkStore, ctx context.Context, key string) (marquee.LinkInput, error) {
	l, err := st.Link(ctx, key)
	in := l.Input()
	in.Code, in.Domain = "", "" // a replace keeps them, and its body has neither
	return in, err
}

// pathID reads the id the route's "{id}" captured; what names the entity
// in the 404 of one that cannot be.
func pathID(ctx *fasthttp.RequestCtx, what string) (int64, error) {
	seg := pathParam(ctx, 0)
	id, err := strconv.ParseInt(string(seg), 10, 64)
	if err != nil || id < 1 {
		return 0, marquee.Errorf(marquee.KindNotFound, "%s %q not found", what, seg)
	}
	return id, nil
}
