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
		os.Exit(1)
	}
}

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
	case "version":
		return runVersion(rest, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, getenv, stdout, stderr)
	case "restore":
		return runRestore(ctx, rest, getenv, stdout, stderr)
	case "privacy":
		return runPrivacy(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
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
// command line from MARQUEE_<NAME> (upper-case, "-" as "_").
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := "MARQUEE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" && !given[f.Name] && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, e)
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
