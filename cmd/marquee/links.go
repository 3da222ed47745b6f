package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"marquee"
	"marquee/linkcsv"
	"marquee/web"
)

const linksUsage = `usage: marquee links import [flags] FILE
       marquee links export [flags]

import stores the links of a CSV file — Marquee's export, or Shlink's,
YOURLS's or Bitly's — in one transaction, straight into the store (see
marquee links import -h). export writes every link as Marquee's CSV.
`

func runLinks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, linksUsage, stdout)
	if err != nil {
		return err
	}
	switch sub {
	case "import":
		return runLinksImport(ctx, args[1:], getenv, stdout, stderr)
	case "export":
		return runLinksExport(ctx, args[1:], getenv, stdout, stderr)
	}
	return unknownSubcommand("links", sub, "import", "export")
}

func runLinksImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("links import", "links import [flags] FILE",
		"Imports a CSV of links (Marquee's, Shlink's, YOURLS's or Bitly's export) into the store in one transaction, every change in the changelog so running servers see it.", stderr)
	data := fs.String("data", "./data", "data directory")
	db := fs.String("db", "", dbUsage)
	dry := fs.Bool("dry-run", false, "check every row and count what would change; write nothing")
	existing := fs.String("existing", "update", "a link whose code is taken: update (its url, title, tags, expiry, limit, redirect) or skip")
	partial := fs.Bool("partial", false, "import the good rows of a file that has bad ones (default: nothing is imported)")
	domain := fs.String("domain", "", "the link domain the rows go on (default: the default domain; Marquee's own CSV may name a domain per row)")
	linkDomains := fs.String("link-domains", "", "the server's -link-domains, which rows may name")
	defaultDomain := fs.String("default-domain", "", "the server's -default-domain")
	var file string
	if n := len(args); n > 0 && args[n-1] != "" && args[n-1][0] != '-' {
		file, args = args[n-1], args[:n-1]
	}
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if file == "" {
		return fmt.Errorf("no file given\n%s", linksUsage)
	}
	if *existing != "update" && *existing != "skip" {
		return fmt.Errorf("-existing: want update or skip, got %q", *existing)
	}
	domains, err := web.ParseLinkDomains(*linkDomains, *defaultDomain, "default")
	if err != nil {
		return err
	}
	var target string
	if *domain != "" {
		var msg string
		if target, msg = domains.Named(*domain); msg != "" {
			return fmt.Errorf("-domain: %s", msg)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	res, err := linkcsv.Read(f, target)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	rows, problems := web.ImportRows(res, &domains)
	*db = dataDB(*data, *db)
	st, err := openStore(ctx, *db, jsonLog(stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	opt := marquee.ImportOptions{Skip: *existing == "skip", DryRun: *dry}
	fmt.Fprintf(stderr, "%s: %s's format, %d rows, %d with problems; ignored columns: %q\n", file, res.Format, res.Total, res.Total-len(rows), res.Ignored)
	if len(problems) > 0 && !*dry && !*partial {
		printProblems(stderr, problems)
		return fmt.Errorf("%d of %d rows have problems, and nothing was imported (-partial imports the others)", res.Total-len(rows), res.Total)
	}
	bar := progressBar(stderr, len(rows), "importing links")
	result, err := st.ImportLinks(ctx, rows, opt, func(n int) { bar.Set(n) })
	if e := marquee.AsError(err); e != nil && e.Kind == marquee.KindInvalid {
		web.RowProblems(problems, res, e.Problems)
		if !*dry {
			printProblems(stderr, problems)
			return fmt.Errorf("nothing was imported: %s", e.Message)
		}
		err = nil
	}
	if err != nil {
		return err
	}
	printProblems(stderr, problems)
	out, _ := json.Marshal(result)
	verb := "imported"
	if *dry {
		verb = "would import (dry run)"
	}
	fmt.Fprintf(stdout, "%s %d links into %s in %v: %s\n", verb, len(rows), redact(*db), time.Since(start).Round(time.Millisecond), out)
	return nil
}

// printProblems prints problems a line each, by row.
func printProblems(w io.Writer, p marquee.Problems) {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		var ra, rb int
		fmt.Sscanf(a, "row %d", &ra)
		fmt.Sscanf(b, "row %d", &rb)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a, b))
	})
	for _, k := range keys {
		fmt.Fprintf(w, "%s: %s\n", k, p[k])
	}
}

func runLinksExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("links export", "links export [flags]", "Writes every link (or those -q and -tag select) as Marquee's CSV, which links import reads back.", stderr)
	data := fs.String("data", "./data", "data directory")
	db := fs.String("db", "", dbUsage)
	q := fs.String("q", "", "only links whose codes start with it or whose titles hold it")
	tag := fs.String("tag", "", "only links with this tag")
	out := fs.String("o", "-", "the file to write (- for standard output)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	f := marquee.LinkFilter{Query: *q}
	if *tag != "" {
		var msg string
		if f.Tag, msg = marquee.NormTag(*tag); msg != "" {
			return fmt.Errorf("-tag: %s", msg)
		}
	}
	*db = dataDB(*data, *db)
	st, err := openStore(ctx, *db, jsonLog(stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	w := stdout
	if *out != "-" {
		file, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	return linkcsv.WriteAll(w, func(offset, limit int) ([]marquee.Link, error) {
		links, _, err := st.SearchLinks(ctx, f, offset, limit)
		return links, err
	})
}
