package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"marquee"
	"marquee/auth"
)

// cliActor is who the audit log says made the changes of these commands.
const cliActor = "cli"

// accessFlags are the flags every keys, users, backup and restore command takes: where
// the store is.
func accessFlags(name string, stderr io.Writer) (*flag.FlagSet, *string, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./data", "data directory (its SQLite file is the default -db)")
	db := fs.String("db", "", dbUsage)
	return fs, data, db
}

// dataDB is the database of the -db flag db, or, when it is "", the
// SQLite file of the data directory data (every command's default).
func dataDB(data, db string) string {
	if db == "" {
		return filepath.Join(data, "marquee.db")
	}
	return db
}

// runKeys is `marquee keys create|list|revoke`: API keys against the
// store, for bootstrapping and scripts. A running server sees the change
// through the changelog.
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const want = "want: keys create -name N -scopes a,b [-expires RFC3339] | keys list | keys revoke -id N  [-data DIR] [-db DB]"
	if len(args) == 0 {
		return errors.New(want)
	}
	fs, data, db := accessFlags("keys "+args[0], stderr)
	var name, scopes, expires *string
	var id *int64
	switch args[0] {
	case "create":
		name = fs.String("name", "", "what the key is for")
		scopes = fs.String("scopes", "", "comma-separated: ads:read, ads:write, links:read, links:write, reports:read, keys:admin")
		expires = fs.String("expires", "", "when the key stops working, RFC 3339 (default: never)")
	case "list":
	case "revoke":
		id = fs.Int64("id", 0, "the key to revoke")
	default:
		return errors.New(want)
	}
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	var in marquee.KeyInput
	if args[0] == "create" {
		body := map[string]any{"name": *name, "scopes": strings.Split(*scopes, ",")}
		if *expires != "" {
			body["expiresAt"] = *expires
		}
		raw, _ := json.Marshal(body)
		var err error
		if in, err = marquee.ParseKeyInput(raw, time.Now()); err != nil {
			return err
		}
	}
	st, err := openStore(ctx, dataDB(*data, *db), jsonLog(stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	switch args[0] {
	case "create":
		secret, hash := auth.NewSecret(auth.KeyPrefix)
		k, err := st.CreateKey(marquee.WithAudit(ctx, marquee.Audit{Actor: cliActor, IP: "local", Action: "create",
			Fields: []string{"name", "scopes", "expiresAt"}}),
			marquee.APIKey{Name: in.Name, Prefix: secret[:auth.PrefixLen], Scopes: in.Scopes, CreatedBy: cliActor, ExpiresAt: in.ExpiresAt}, hash)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created key %d %q (%s); its secret is shown only now:\n", k.ID, k.Name, k.Scopes)
		fmt.Fprintln(stdout, secret)
	case "list":
		keys, err := st.Keys(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, "id\tprefix\tname\tscopes\tstate\tlast used")
		for _, k := range keys {
			state := "active"
			switch {
			case k.RevokedAt != nil:
				state = "revoked"
			case !k.Usable(time.Now()):
				state = "expired"
			}
			used := "never"
			if k.LastUsedAt != nil {
				used = k.LastUsedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(stdout, "%d\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.Scopes, state, used)
		}
	case "revoke":
		if err := st.RevokeKey(marquee.WithAudit(ctx, marquee.Audit{Actor: cliActor, IP: "local", Action: "revoke"}), *id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked key %d\n", *id)
	}
	return nil
}

// runUsers is `marquee users add -email E -role R`: a user, with the
// password typed at a prompt (on a terminal) or read from the first line
// of standard input.
func runUsers(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	const want = "want: users add -email E -role owner|admin|editor|viewer [-data DIR] [-db DB] (password from the prompt or standard input)"
	if len(args) == 0 || args[0] != "add" {
		return errors.New(want)
	}
	fs, data, db := accessFlags("users add", stderr)
	email := fs.String("email", "", "the user's email")
	role := fs.String("role", marquee.RoleViewer, "owner, admin, editor or viewer")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(map[string]string{"email": *email, "role": *role, "password": password})
	in, err := marquee.ParseUserInput(raw, true)
	if err != nil {
		return err
	}
	hash, err := auth.HashPassword(*in.Password)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, dataDB(*data, *db), jsonLog(stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.CreateUser(marquee.WithAudit(ctx, marquee.Audit{Actor: cliActor, IP: "local", Action: "create",
		Fields: []string{"email", "role", "password"}}), *in.Email, *in.Role, hash)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added user %d %s (%s)\n", u.ID, u.Email, u.Role)
	return nil
}

// readPassword prompts for a password without echo when stdin is a
// terminal, else reads the first line of stdin.
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		return string(b), err
	}
	if stdin == nil {
		return "", errors.New("no password: type it at the prompt, or give it on standard input")
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
