package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs marquee with args and stdin, and returns its error, stdout
// and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(t.Context(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

// TestEveryCommandAnswersHelp: every command and subcommand answers -h,
// -help and --help with a usage that names it, and succeeds (exit 0).
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Parallel()
	commands := [][]string{{"serve"}, {"seed"}, {"bench"}, {"hello"}, {"events"}, {"events", "cat"}, {"reports"}, {"reports", "rebuild"},
		{"keys"}, {"keys", "create"}, {"keys", "list"}, {"keys", "revoke"},
		{"users"}, {"users", "list"}, {"users", "add"}, {"users", "role"}, {"users", "password"}, {"users", "remove"},
		{"version"}, {"healthcheck"}, {"backup"}, {"restore"}, {"links"}, {"links", "import"}, {"links", "export"}, {"forecast"}, {"forecast", "backtest"}}
	for _, c := range commands {
		for _, h := range []string{"-h", "-help", "--help"} {
			args := append(append([]string{}, c...), h)
			out, errOut, err := runCLI(t, "", args...)
			usage := out + errOut
			if err != nil || !strings.Contains(usage, "usage: marquee "+strings.Join(c, " ")) {
				t.Errorf("marquee %s = %v, usage %q; want success and a usage naming the command", strings.Join(args, " "), err, usage)
			}
			for _, line := range strings.Split(usage, "\n") {
				if strings.Count(line, "(default") > 1 {
					t.Errorf("marquee %s: a flag says its default twice: %q", strings.Join(args, " "), line)
				}
			}
		}
	}
	if out, _, err := runCLI(t, "", "help"); err != nil || !strings.Contains(out, "usage: marquee <command>") {
		t.Errorf("marquee help = %v, %q", err, out)
	}
	// Without a subcommand, or with an unknown one: an error with the usage.
	for _, c := range []string{"keys", "users", "events", "reports"} {
		if _, _, err := runCLI(t, "", c); err == nil || !strings.Contains(err.Error(), "usage: marquee "+c) {
			t.Errorf("marquee %s = %v; want an error with its usage", c, err)
		}
		if _, _, err := runCLI(t, "", c, "frobnicate"); err == nil || !strings.Contains(err.Error(), `unknown subcommand "frobnicate"`) {
			t.Errorf("marquee %s frobnicate = %v; want an unknown subcommand error", c, err)
		}
	}
}

// TestReadCommandsDoNotCreateAStore: a command that works on a store
// refuses a data directory without one (a mistyped -data) instead of
// making an empty store there; only users add and keys create, which may
// bootstrap before the first serve, make one.
func TestReadCommandsDoNotCreateAStore(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "mistyped")
	for _, args := range [][]string{
		{"keys", "list"}, {"keys", "revoke", "-id", "1"},
		{"users", "list"}, {"users", "remove", "-email", "a@example.com"}, {"users", "role", "-email", "a@example.com", "-role", "admin"},
		{"users", "password", "-email", "a@example.com"},
		{"reports", "rebuild", "-from", "2026-11-20T00:00:00Z", "-to", "2026-11-21T00:00:00Z"},
		{"backup", "-to", filepath.Join(t.TempDir(), "b.db")},
	} {
		args = append(args, "-data", missing)
		_, _, err := runCLI(t, "a long passphrase\n", args...)
		if err == nil || !strings.Contains(err.Error(), "no store at") {
			t.Errorf("marquee %s = %v; want no store at …", strings.Join(args, " "), err)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("marquee %s made %s", strings.Join(args, " "), missing)
		}
	}
}

// TestCLIFlagChecks: flags are checked, and messages name the real
// problem.
func TestCLIFlagChecks(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hello", "-size", "-1"}, "-size -1"},
		{[]string{"restore", "-from", filepath.Join(data, "nonexistent.db"), "-data", data}, "the backup"},
		{[]string{"keys", "revoke", "-data", data}, "-id N is required"},
		{[]string{"events", "cat"}, "no file given"},
		{[]string{"seed", "-ads", "-5", "-data", data}, "must be ≥ 0"},
	} {
		if _, _, err := runCLI(t, "", c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("marquee %s = %v; want an error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}

// TestUsersCommands: users list, add, role, password and remove against
// the store of a data directory.
func TestUsersCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil) // makes the store
	in.stop()
	pw := "a long passphrase\n"
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{pw, []string{"users", "add", "-email", "o@example.com", "-role", "owner"}, "added user 1 o@example.com (owner)"},
		{pw, []string{"users", "add", "-email", "e@example.com", "-role", "editor"}, "added user 2 e@example.com (editor)"},
		{"", []string{"users", "role", "-email", "e@example.com", "-role", "admin"}, "user 2 e@example.com is now admin"},
		{"another long one\n", []string{"users", "password", "-email", "e@example.com"}, "set the password of user 2"},
		{pw, []string{"users", "add", "-email", "p@example.com", "-role", "publisher", "-sites", "news,blog"}, "added user 3 p@example.com (publisher)"},
		{"", []string{"users", "list"}, "id\temail\trole\n1\to@example.com\towner\n2\te@example.com\tadmin\n3\tp@example.com\tpublisher (sites blog,news)\n"},
		{"", []string{"users", "role", "-email", "p@example.com", "-role", "viewer"}, "user 3 p@example.com is now viewer"},
		{"", []string{"users", "remove", "-email", "e@example.com"}, "removed user 2 e@example.com"},
	} {
		out, errOut, err := runCLI(t, c.stdin, append(c.args, "-data", data)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Fatalf("marquee %s = %v, %q (%s); want %q", strings.Join(c.args, " "), err, out, errOut, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"users", "remove", "-email", "o@example.com"}, "owner"},
		{[]string{"users", "role", "-email", "nobody@example.com", "-role", "admin"}, "no user nobody@example.com"},
		{[]string{"users", "role", "-email", "o@example.com", "-role", "boss"}, "role"},
		{[]string{"users", "role", "-email", "p@example.com", "-role", "advertiser"}, "an advertiser user needs one or more advertisers"},
		{[]string{"users", "role", "-email", "p@example.com", "-role", "advertiser", "-advertisers", "99"}, "advertiser 99"},
		{[]string{"users", "role", "-email", "p@example.com", "-role", "viewer", "-sites", "news"}, "only advertiser and publisher users are bound"},
	} {
		if _, _, err := runCLI(t, "", append(c.args, "-data", data)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("marquee %s = %v; want an error naming %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	in = start(t, data, nil)
	in.signIn(t, `{"email":"o@example.com","password":"a long passphrase"}`)
}

// A typo of a command, or of one of serve's flags, names the right one,
// says where the rest are listed in one line (not the whole usage), and
// exits 2 — the process, as a shell sees it — without creating the data
// directory; so do a bad flag value and an address already in use (exit
// 1). --version and -version print the version.
func TestTyposSuggestAndCreateNothing(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serv"}, 2, `unknown command "serv"; did you mean serve?`},
		{[]string{"sed"}, 2, `did you mean seed?`},
		{[]string{"bnch"}, 2, `did you mean bench?`},
		{[]string{"linx"}, 2, `did you mean links?`},
		{[]string{"restor"}, 2, `did you mean restore?`},
		{[]string{"serve", "-adr", ":0"}, 2, "flag provided but not defined: -adr; did you mean -addr? (marquee serve -h lists its flags)"},
		{[]string{"serve", "-privcy", "strict"}, 2, "did you mean -privacy?"},
		{[]string{"serve", "-privacy", "strcit"}, 2, `-privacy: privacy mode "strcit"`},
		{[]string{"serve", "-currency", "EURO"}, 2, `-currency: want an ISO 4217 currency code such as USD, EUR or TWD, got "EURO"`},
		{[]string{"serve", "-addr", busy.Addr().String()}, 1, "address already in use"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		cmd := exec.Command(os.Args[0], append(c.args, "-data", data)...)
		if len(c.args) == 1 {
			cmd = exec.Command(os.Args[0], c.args...)
		}
		cmd.Env = append(os.Environ(), "MARQUEE_TEST_RUN_MAIN=1", "MARQUEE_DATA="+data)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		}
		if code != c.code || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") > 3 {
			t.Errorf("marquee %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(c.args, " "), code, stderr.String(), c.code, c.want)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("marquee %s created the data directory %s", strings.Join(c.args, " "), data)
		}
	}
	for _, v := range []string{"--version", "-version", "version"} {
		if out, _, err := runCLI(t, "", v); err != nil || !strings.HasPrefix(out, "marquee ") {
			t.Errorf("marquee %s = %v, %q; want the version", v, err, out)
		}
	}
}
