// Package linkcsv reads links from CSV — Marquee's own export, and the
// exports of Shlink, YOURLS and Bitly — and writes Marquee's: one package
// that both writes the format and reads it back (a round-trip test holds
// them together).
//
// A file's format is told by its header row (names compared in any case,
// spaces, dashes and underscores ignored). Each format's columns map onto
// a link's fields; columns a format has that a link does not (visits,
// createdAt, ip) are named in Result.Ignored and left out.
package linkcsv

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// The formats Read knows.
const (
	Marquee = "marquee" // code, url, title, tags, domain, expiresAt, maxClicks, redirect (Write's)
	Shlink  = "shlink"  // createdAt, domain, shortCode, shortUrl, longUrl, title, tags ("|"), visits
	YOURLS  = "yourls"  // keyword, url, title, timestamp, ip, clicks
	Bitly   = "bitly"   // link (or bitlink, id: the short link), long_url, title, tags, created_at, …
)

// Columns are the header Write writes, Marquee's format.
var Columns = []string{"code", "url", "title", "tags", "domain", "expiresAt", "maxClicks", "redirect"}

// Row is one link read, with the row it was on (the header is row 1, as
// a spreadsheet numbers them).
type Row struct {
	Line int
	In   marquee.LinkInput
}

// Result is what Read found.
type Result struct {
	Format  string
	Rows    []Row              // the rows that are links
	Ignored []string           // columns of the file that no link field takes
	Bad     []marquee.Problems // the problems of the first MaxBadKept bad rows, by field ("row 7: url")
	BadRows int                // every bad row, those in Bad and those past them
	Total   int                // data rows read, good and bad
}

// MaxBadKept bounds the bad rows a Result keeps the problems of: a file of
// bad rows costs a count past them, not a map each (a 4 MB file of them
// took a server to 1.2 GB).
const MaxBadKept = 1000

// bad keeps a bad row's problems while fewer than MaxBadKept are kept, and
// counts it.
func (r *Result) bad(p func() marquee.Problems) {
	if r.BadRows++; len(r.Bad) < MaxBadKept {
		r.Bad = append(r.Bad, p())
	}
}

// Problems are every bad row's problems in one set, each field named
// "row N: field".
func (r *Result) Problems() marquee.Problems {
	p := marquee.Problems{}
	for _, b := range r.Bad {
		for k, v := range b {
			p[k] = v
		}
	}
	return p
}

// MaxRows bounds the rows one file may hold.
const MaxRows = 1_000_000

// fields are the link fields a column may fill, by the normalised header
// names each format gives them.
var fields = map[string]string{
	"code": "code", "shortcode": "code", "keyword": "code",
	"link": "short", "bitlink": "short", "id": "short",
	"url": "url", "longurl": "url", "destination": "url",
	"title": "title", "tags": "tags", "domain": "domain",
	"expiresat": "expiresAt", "validuntil": "expiresAt",
	"maxclicks": "maxClicks", "maxvisits": "maxClicks", "redirect": "redirect",
}

// norm is a header name as fields knows it.
func norm(h string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-', '\uFEFF':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(h)))
}

// Read reads the links of a CSV file in any of the formats, each on the
// domain given (its own domain column counts only in Marquee's format:
// another server's short domain is not this one's). A row that is not a
// valid link (or repeats an earlier row's code) goes to Result.Bad with
// every problem, and reading goes on;
// an error is returned only for a file that cannot be read as CSV at
// all, or one that has no url column or more than MaxRows rows.
func Read(r io.Reader, domain string) (*Result, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("the file is empty: want a header row (code,url,title,tags,…) and a row per link")
	}
	if err != nil {
		return nil, fmt.Errorf("the header row: %w", err)
	}
	res := &Result{}
	cols := make([]string, len(header)) // the field of each column ("" ignored)
	names := map[string]bool{}
	for i, h := range header {
		n := norm(h)
		names[n] = true
		if f, ok := fields[n]; ok {
			cols[i] = f
		} else if n != "" {
			res.Ignored = append(res.Ignored, strings.TrimSpace(h))
		}
	}
	switch {
	case names["shortcode"] && names["longurl"]:
		res.Format = Shlink
	case names["keyword"] && names["url"]:
		res.Format = YOURLS
	case names["longurl"] && (names["link"] || names["bitlink"] || names["id"]):
		res.Format = Bitly
	default:
		res.Format = Marquee
	}
	if !hasField(cols, "url") {
		return nil, fmt.Errorf("the header row names no url column (got %q): want code,url,title,tags,… or a Shlink, YOURLS or Bitly export", header)
	}
	if res.Format != Marquee {
		for i, f := range cols {
			if f == "domain" {
				cols[i] = ""
			}
		}
	}
	seen := map[string]int{} // the row of each code (LinkKey)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if res.Total++; res.Total > MaxRows {
			return nil, fmt.Errorf("more than %d rows: split the file", MaxRows)
		}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			res.bad(func() marquee.Problems {
				return marquee.Problems{fmt.Sprintf("row %d", pe.StartLine): "is not CSV: " + err.Error()}
			})
			continue
		case err != nil:
			return nil, err // the reader's, not the file's
		}
		line, _ := cr.FieldPos(0) // rows are lines: blank lines count, as a spreadsheet shows them
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			res.Total--
			continue // a line of spaces
		}
		in, p := parseRow(rec, cols, domain)
		if key := marquee.LinkKey(in.Domain, in.Code); in.Code != "" && len(p) == 0 {
			if first, ok := seen[key]; ok {
				p["code"] = fmt.Sprintf("repeats row %d's code", first)
			} else {
				seen[key] = line
			}
		}
		if len(p) > 0 {
			res.bad(func() marquee.Problems {
				bad := marquee.Problems{}
				for k, v := range p {
					bad[fmt.Sprintf("row %d: %s", line, k)] = v
				}
				return bad
			})
			continue
		}
		res.Rows = append(res.Rows, Row{Line: line, In: in})
	}
}

func hasField(cols []string, f string) bool {
	for _, c := range cols {
		if c == f {
			return true
		}
	}
	return false
}

// parseRow reads one row into a link, with the problems of its fields
// named as in the link API.
func parseRow(rec []string, cols []string, domain string) (marquee.LinkInput, marquee.Problems) {
	in := marquee.LinkInput{Domain: domain, Redirect: marquee.DefaultRedirect}
	p := marquee.Problems{}
	if len(rec) > len(cols) {
		p["row"] = fmt.Sprintf("has %d cells, the header %d", len(rec), len(cols))
		return in, p
	}
	for i, v := range rec {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		switch cols[i] {
		case "code":
			in.Code = v
		case "short": // a short link: its code is its last path segment
			in.Code = shortCode(v)
		case "url":
			in.URL = v
		case "title":
			in.Title = uninert(v)
		case "tags":
			for t := range strings.FieldsFuncSeq(uninert(v), func(r rune) bool { return r == '|' || r == ',' }) {
				in.Tags = append(in.Tags, t)
			}
		case "domain":
			in.Domain = v
		case "expiresAt":
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				p["expiresAt"] = fmt.Sprintf("must be an RFC 3339 timestamp, got %q", v)
			}
			in.ExpiresAt = t.UTC().Truncate(time.Millisecond)
		case "maxClicks":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				p["maxClicks"] = "must be a positive integer (leave it empty for no limit)"
			}
			in.MaxClicks = n
		case "redirect":
			n, err := strconv.Atoi(v)
			if err != nil {
				p["redirect"] = "must be one of 301, 302, 307, 308"
			}
			in.Redirect = n
		}
	}
	if err := in.Validate(); err != nil {
		for k, v := range marquee.AsError(err).Problems {
			if _, named := p[k]; !named {
				p[k] = v
			}
		}
	}
	return in, p
}

// shortCode is the code of a short link as another shortener writes it:
// "https://bit.ly/abc", "bit.ly/abc" or "abc".
func shortCode(s string) string {
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	p := strings.Trim(u.Path, "/")
	if p == "" { // "abc" alone parsed as a host
		return u.Host
	}
	return p[strings.LastIndexByte(p, '/')+1:]
}

// WriteAll writes, in Marquee's format, every link that page gives, page
// by page (the links from offset, at most limit; fewer: the last page).
func WriteAll(w io.Writer, page func(offset, limit int) ([]marquee.Link, error)) error {
	cw := NewWriter(w)
	const limit = 1000
	for offset := 0; ; offset += limit {
		links, err := page(offset, limit)
		if err != nil {
			return err
		}
		for i := range links {
			if err := cw.Write(&links[i]); err != nil {
				return err
			}
		}
		if len(links) < limit {
			return cw.Flush()
		}
	}
}

// Writer writes links in Marquee's format, the header first.
type Writer struct {
	cw     *csv.Writer
	header bool
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{cw: csv.NewWriter(w)} }

// Write writes one link (the header before the first).
func (w *Writer) Write(l *marquee.Link) error {
	if !w.header {
		w.header = true
		if err := w.cw.Write(Columns); err != nil {
			return err
		}
	}
	var expires, maxClicks string
	if !l.ExpiresAt.IsZero() {
		expires = marquee.FormatTime(l.ExpiresAt)
	}
	if l.MaxClicks > 0 {
		maxClicks = strconv.FormatInt(l.MaxClicks, 10)
	}
	return w.cw.Write([]string{l.Code, l.URL, inert(l.Title), inert(strings.Join(l.Tags, ",")), l.Domain, expires, maxClicks, strconv.Itoa(l.Redirect)})
}

// Flush writes what is buffered and reports a write's error.
func (w *Writer) Flush() error {
	if !w.header { // no link: the header alone
		w.header = true
		w.cw.Write(Columns)
	}
	w.cw.Flush()
	return w.cw.Error()
}

// uninert takes off the "'" inert put before a cell.
func uninert(cell string) string {
	if len(cell) > 1 && cell[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(cell[1])) {
		return cell[1:]
	}
	return cell
}

// inert makes a text cell that a spreadsheet would run as a formula (it
// starts with =, +, -, @, a tab or a carriage return) show as text, with a
// leading "'" (OWASP's advice on CSV injection). Read takes the "'" off
// again where it was put.
func inert(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}
