// Command marquee is Marquee's one binary: the server (serve), the seeder
// (seed), the load generator (bench) and a hello-world baseline for
// benchmarks (hello).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "marquee:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2) // as flag's ExitOnError does: the command line was wrong
		}
		os.Exit(1)
	}
}

// usageError is a command line that names no command or flag of
// Marquee's, or gives a flag a bad value: the process exits 2, and
// nothing was created on disk.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// suggest is the name of names nearest to typo, as "; did you mean
// X?", or "" when none is near (an edit distance of at most a third of
// the longer name, and 2 at least).
func suggest(typo string, names []string, prefix string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		if d := editDistance(typo, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD > max(2, max(len(typo), len(best))/3) {
		return ""
	}
	return fmt.Sprintf("; did you mean %s%s?", prefix, best)
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// unknownSubcommand is the usageError of sub, which is none of command's
// subcommands subs.
func unknownSubcommand(command, sub string, subs ...string) error {
	return usageError{fmt.Errorf("unknown subcommand %q%s (marquee %s -h lists them)", sub, suggest(sub, subs, command+" "), command)}
}

// commands are the commands dispatch knows, for suggestions.
var commands = []string{"serve", "seed", "bench", "events", "reports", "links", "keys", "users", "hello", "version", "healthcheck", "backup", "restore", "privacy", "forecast", "help"}

const usage = `usage: marquee <command> [flags]

commands:
  serve   run the server (see marquee serve -h)
  seed    fill the store with generated ads (see marquee seed -h)
  bench   load a server with a scenario and report req/s and latency (see marquee bench -h)
  hello   run a fasthttp hello-world, the baseline of benchmarks
  events  events cat FILE…: decode event files to NDJSON on stdout
  reports reports rebuild -from T -to T: recompute reports from the event files
  links   links import FILE | links export: links from and to CSV (Marquee's, Shlink's, YOURLS's, Bitly's)
  keys    keys create|list|revoke: API keys (see marquee keys -h)
  users   users list|add|role|remove|password: people who sign in (see marquee users -h)
  version print the version, commit, build time and Go version
  healthcheck -url U: exit 0 when U answers 200 (for container healthchecks)
  backup  backup -to FILE: a consistent copy of the SQLite store, while it serves
  restore restore -from FILE [-force]: make a backup the data directory's store
  privacy privacy export -user KEY: what the event files hold about a visitor (docs/privacy.md)
  forecast forecast backtest: the forecasts' error on generated traffic (docs/benchmarks.md)

Every command answers -h with its flags. Every flag can also be set as
MARQUEE_<NAME> (e.g. MARQUEE_ADMIN_TOKEN).
`

// run is the whole program: main only supplies the process's context,
// arguments, environment and streams. A command asked for its usage
// (-h, -help, --help) prints it and succeeds.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdin, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// dispatch runs the command args name.
func dispatch(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "seed":
		return runSeed(ctx, rest, getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, getenv, stdout, stderr)
	case "events":
		return runEvents(ctx, rest, stdout, stderr)
	case "reports":
		return runReports(ctx, rest, getenv, stdout, stderr)
	case "links":
		return runLinks(ctx, rest, getenv, stdout, stderr)
	case "keys":
		return runKeys(ctx, rest, getenv, stdout, stderr)
	case "users":
		return runUsers(ctx, rest, getenv, stdin, stdout, stderr)
	case "hello":
		return runHello(ctx, rest, getenv, stdout, stderr)
	case "version", "-version", "--version":
		return runVersion(rest, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, getenv, stdout, stderr)
	case "restore":
		return runRestore(ctx, rest, getenv, stdout, stderr)
	case "privacy":
		return runPrivacy(ctx, rest, getenv, stdout, stderr)
	case "forecast":
		return runForecast(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q%s (marquee -h lists the commands)", cmd, suggest(cmd, commands, ""))}
}

// newFlags is the flag set of command name, whose usage (on -h, or after
// a bad flag) is "usage: marquee <synopsis>", what the command does, and
// its flags, on w.
func newFlags(name, synopsis, about string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: marquee %s\n\n%s\n", synopsis, about)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags (each also MARQUEE_<NAME>):\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// subcommand is the first of args when it names one of a command's
// subcommands. When args are empty it returns an error holding usage;
// when they ask for help it prints usage on stdout and returns
// flag.ErrHelp (which run turns into success).
func subcommand(args []string, usage string, stdout io.Writer) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("no subcommand given\n%s", usage)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return "", flag.ErrHelp
	}
	return args[0], nil
}

// parseFlags parses args into fs, then fills every flag not given on the
// command line from MARQUEE_<NAME> (upper-case, "-" as "_"). Asked for
// help, it prints the usage; a bad flag is a usageError that names it,
// the nearest flag when one is near, and where the others are listed —
// not the whole list.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	case err != nil:
		hint := ""
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			hint = suggest(strings.TrimPrefix(name, "-"), names, "-")
		}
		return usageError{fmt.Errorf("%w%s (marquee %s -h lists its flags)", err, hint, fs.Name())}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %q (marquee %s -h lists its flags)", fs.Args(), fs.Name())}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		env := "MARQUEE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" && !given[f.Name] && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError{fmt.Errorf("%s=%q: %w", env, v, e)}
			}
		}
	})
	return err
}

// isTerminal reports whether w is a terminal: progress is drawn only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
