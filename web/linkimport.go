package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/linkcsv"
)

// Limits of link imports.
const (
	// MaxImportBody is the largest CSV POST /api/v1/links/import takes
	// (about 500,000 rows of a typical export), allowed for that route
	// alone and only to a request that brings a credential (see
	// requestConfig).
	MaxImportBody = 64 << 20
	// importTimeout bounds an import's transaction.
	importTimeout = 10 * time.Minute
	// importReadTimeout is how long a client has to send an import's
	// body.
	importReadTimeout = time.Minute
	// keptJobs is how many finished imports this instance remembers.
	keptJobs = 100
	// MaxImportProblems bounds the rows an answer names problems of (the
	// first, by line): a file of a million bad rows answers a page, not
	// a million problems.
	MaxImportProblems = 1000
)

const importPath = "/api/v1/links/import"

// requestConfig is fasthttp's HeaderReceived: the import route takes a
// larger body and longer to send it, but only from a request whose
// credential is valid and holds links:write — checked here, on the
// headers, before a byte of the body is read. Any other request keeps the
// 1 MiB limit and the read timeout of every route (and the route's gate
// then answers 401 or 403).
func (s *Server) requestConfig(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if !h.IsPost() || string(h.RequestURI()) != importPath && !bytes.HasPrefix(h.RequestURI(), []byte(importPath+"?")) {
		return fasthttp.RequestConfig{}
	}
	p, err := s.credential(h)
	if err != nil || !p.Scopes.Has(marquee.ScopeLinksWrite) {
		return fasthttp.RequestConfig{}
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: MaxImportBody, ReadTimeout: importReadTimeout}
}

// ImportStore is what an import needs of the store.
type ImportStore interface {
	ImportLinks(ctx context.Context, ins []marquee.LinkInput, opt marquee.ImportOptions, progress func(done int)) (marquee.ImportResult, error)
}

// importJob is one import this instance runs, as GET
// /api/v1/links/import/{id} shows it.
type importJob struct {
	ID       string `json:"id"`
	Status   string `json:"status"` // running, done or failed
	Format   string `json:"format"`
	Rows     int    `json:"rows"`  // data rows of the file
	Valid    int    `json:"valid"` // rows imported (the others have problems)
	Done     int64  `json:"done"`  // rows stored so far (atomic: see view)
	Error    string `json:"error,omitempty"`
	Started  string `json:"startedAt"`
	Finished string `json:"finishedAt,omitempty"`
	marquee.ImportResult
	Ignored  []string         `json:"ignoredColumns"`
	Problems marquee.Problems `json:"problems"` // of the first MaxImportProblems rows with problems
	// ProblemRows is how many rows have problems in all (Problems names
	// the first MaxImportProblems).
	ProblemRows int `json:"problemRows"`
	// progress is the rows stored so far, which the import writes
	// without imports.mu.
	progress *atomic.Int64
}

// view is a copy of the job to show, Done its progress: the caller holds
// imports.mu.
func (j *importJob) view() importJob {
	v := *j
	if j.progress != nil {
		v.Done = j.progress.Load()
	}
	return v
}

// imports runs and remembers this instance's imports.
type imports struct {
	st     ImportStore
	writer *writer
	log    *slog.Logger
	now    func() time.Time

	mu   sync.Mutex
	jobs map[string]*importJob // guarded by mu, as are the jobs' fields but Done
	done []string              // finished jobs, oldest first
}

// handleImportLinks serves POST /api/v1/links/import: a CSV of links
// (linkcsv) checked row by row. With dryRun=true it answers what the
// import would do, and every bad row's problems, writing nothing. Else a
// file with a bad row is refused whole (400, every row's problems) unless
// partial=true, and a good one is imported in one transaction by a job:
// 202 and the job, at /api/v1/links/import/{id}. existing=skip keeps links
// whose codes are taken; domain= puts the rows on a link domain.
func handleImportLinks(im *imports, domains *LinkDomains) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		err := checkBody(ctx, MaxImportBody, func(media []byte) bool {
			return string(media) == "text/csv" || string(media) == "application/csv" || string(media) == "text/plain"
		}, "content type %q is not CSV; send text/csv")
		if err != nil {
			return err
		}
		args := ctx.QueryArgs()
		p := marquee.Problems{}
		flag := func(k string) bool {
			v := string(args.Peek(k))
			if v != "" && v != "true" && v != "false" {
				p[k] = fmt.Sprintf("must be true or false, got %q", v)
			}
			return v == "true"
		}
		dry, partial := flag("dryRun"), flag("partial")
		var opt marquee.ImportOptions
		switch v := string(args.Peek("existing")); v {
		case "", "update":
		case "skip":
			opt.Skip = true
		default:
			p["existing"] = fmt.Sprintf("must be update or skip, got %q", v)
		}
		var domain string
		if args.Has("domain") {
			var msg string
			if domain, msg = domains.Named(string(args.Peek("domain"))); msg != "" {
				p["domain"] = msg
			}
		}
		if err := marquee.Invalid("invalid query", p); err != nil {
			return err
		}
		res, err := linkcsv.Read(bytes.NewReader(ctx.PostBody()), domain)
		if err != nil {
			return marquee.Invalid("invalid import", marquee.Problems{"body": err.Error()})
		}
		rows, problems := ImportRows(res, domains)
		job := &importJob{Format: res.Format, Rows: res.Total, Valid: len(rows), Ignored: res.Ignored, Problems: problems}
		if job.Ignored == nil {
			job.Ignored = []string{}
		}
		if dry {
			opt.DryRun = true
			job.Status = "dry run"
			job.ImportResult, err = im.st.ImportLinks(sctx, rows, opt, func(int) {})
			job.Done = int64(len(rows))
			if e := marquee.AsError(err); e != nil && e.Kind == marquee.KindInvalid {
				RowProblems(job.Problems, res, e.Problems)
				err = nil
			}
			if err != nil {
				return err
			}
			job.Problems, job.ProblemRows = FirstProblems(job.Problems, MaxImportProblems)
			job.ProblemRows += unkept(res)
			writeJSON(ctx, fasthttp.StatusOK, job)
			return nil
		}
		if len(problems) > 0 && !partial {
			shown, n := FirstProblems(problems, MaxImportProblems)
			n += unkept(res)
			return marquee.Invalid(fmt.Sprintf("invalid import: %d of %d rows have problems (those of the first %d are named), and nothing was imported (send partial=true to import the others)",
				n, res.Total, min(n, MaxImportProblems)), shown)
		}
		job.Problems, job.ProblemRows = FirstProblems(job.Problems, MaxImportProblems)
		job.ProblemRows += unkept(res)
		im.start(sctx, job, res, rows, opt)
		ctx.Response.Header.Set(fasthttp.HeaderLocation, importPath+"/"+job.ID)
		im.mu.Lock()
		defer im.mu.Unlock()
		writeJSON(ctx, fasthttp.StatusAccepted, job.view())
		return nil
	}
}

// unkept is how many of res's bad rows it counted without keeping their
// problems (past linkcsv.MaxBadKept).
func unkept(res *linkcsv.Result) int { return res.BadRows - len(res.Bad) }

// ImportRows are the links of res's good rows, their domains checked
// against domains (a row whose domain is not one of them goes bad), and
// the problems of every bad row.
func ImportRows(res *linkcsv.Result, domains *LinkDomains) ([]marquee.LinkInput, marquee.Problems) {
	problems := res.Problems()
	rows := make([]marquee.LinkInput, 0, len(res.Rows))
	good := res.Rows[:0:0]
	for _, r := range res.Rows {
		if err := domains.Check(&r.In); err != nil {
			problems[fmt.Sprintf("row %d: domain", r.Line)] = marquee.AsError(err).Problems["domain"]
			continue
		}
		rows = append(rows, r.In)
		good = append(good, r)
	}
	res.Rows = good
	return rows, problems
}

// RowProblems adds a store's problems of the good rows of res (rows[i],
// the ins ImportRows gave it) to p, named by the rows of the file.
func RowProblems(p marquee.Problems, res *linkcsv.Result, store marquee.Problems) {
	for k, v := range store {
		var i int
		if _, err := fmt.Sscanf(k, "rows[%d]", &i); err == nil && i < len(res.Rows) {
			k = fmt.Sprintf("row %d: code", res.Rows[i].Line)
		}
		p[k] = v
	}
}

// FirstProblems keeps the problems of the first max rows of p (keys
// "row N: field", by N; other keys first) and says how many rows p names.
func FirstProblems(p marquee.Problems, max int) (marquee.Problems, int) {
	rowOf := func(k string) int {
		var n int
		if _, err := fmt.Sscanf(k, "row %d:", &n); err != nil {
			return -1
		}
		return n
	}
	rows := map[int]bool{}
	for k := range p {
		rows[rowOf(k)] = true
	}
	n := len(rows)
	if rows[-1] {
		n--
	}
	if len(rows) <= max {
		return p, n
	}
	nums := slices.Sorted(maps.Keys(rows))[:max]
	last := nums[len(nums)-1]
	out := make(marquee.Problems, max)
	for k, v := range p {
		if rowOf(k) <= last {
			out[k] = v
		}
	}
	return out, n
}

// start runs job's import of rows in a goroutine of its own, which ends
// with the transaction (importTimeout at most); the job is remembered
// until keptJobs newer ones have finished.
func (im *imports) start(sctx context.Context, job *importJob, res *linkcsv.Result, rows []marquee.LinkInput, opt marquee.ImportOptions) {
	var b [8]byte
	rand.Read(b[:])
	job.ID, job.Status, job.Started = hex.EncodeToString(b[:]), "running", marquee.FormatTime(im.now())
	job.progress = new(atomic.Int64)
	im.mu.Lock()
	im.jobs[job.ID] = job
	im.mu.Unlock()
	// The request's audit (who imported) goes with the job; its deadline
	// does not.
	ctx := context.WithoutCancel(sctx)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, importTimeout)
		defer cancel()
		result, err := im.st.ImportLinks(ctx, rows, opt, func(n int) { job.progress.Store(int64(n)) })
		err = im.writer.visible(ctx, err, "link import")
		im.mu.Lock()
		defer im.mu.Unlock()
		job.ImportResult, job.Finished, job.Status = result, marquee.FormatTime(im.now()), "done"
		if err != nil {
			job.Status = "failed"
			if e := marquee.AsError(err); e != nil && e.Kind == marquee.KindInvalid {
				job.Error = "nothing was imported: " + e.Message
				RowProblems(job.Problems, res, e.Problems)
				job.Problems, job.ProblemRows = FirstProblems(job.Problems, MaxImportProblems)
				job.ProblemRows += unkept(res)
			} else {
				job.Error = "nothing was imported: the store failed (see the server's log)"
				im.log.Error("link import failed", "job", job.ID, "err", err)
			}
		}
		im.done = append(im.done, job.ID)
		if len(im.done) > keptJobs {
			delete(im.jobs, im.done[0])
			im.done = im.done[1:]
		}
	}()
}

// handleImportJob serves GET /api/v1/links/import/{id}: an import this
// instance runs or ran (a 404 on another instance, or after a restart).
func handleImportJob(im *imports) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		id := string(pathParam(ctx, 0))
		im.mu.Lock()
		defer im.mu.Unlock()
		job := im.jobs[id]
		if job == nil {
			return marquee.Errorf(marquee.KindNotFound, "no import %q on this instance (an import's status is kept by the instance that runs it, until it restarts)", id)
		}
		writeJSON(ctx, fasthttp.StatusOK, job.view())
		return nil
	}
}

// handleExportLinks serves GET /api/v1/links/export: every link (or,
// with q and tag, those GET /api/v1/links would list) as Marquee's CSV,
// which POST /api/v1/links/import reads back.
func handleExportLinks(store LinkStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		f, err := linkFilter(ctx.QueryArgs())
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		err = linkcsv.WriteAll(&buf, func(offset, limit int) ([]marquee.Link, error) {
			links, _, err := store.SearchLinks(sctx, f, offset, limit)
			return links, err
		})
		if err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType("text/csv; charset=utf-8")
		ctx.Response.Header.Set("Content-Disposition", `attachment; filename="links-`+strconv.FormatInt(time.Now().Unix(), 10)+`.csv"`)
		ctx.SetBody(buf.Bytes())
		return nil
	}
}
