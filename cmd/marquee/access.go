package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"marquee"
	"marquee/auth"
	"marquee/store"
)

// cliActor is who the audit log says made the changes of these commands.
const cliActor = "cli"

// accessFlags are the flags every keys, users, backup and restore command
// takes: where the store is.
func accessFlags(name, synopsis, about string, stderr io.Writer) (*flag.FlagSet, *string, *string) {
	fs := newFlags(name, synopsis+" [-data DIR] [-db DB]", about, stderr)
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

// openExisting opens the store at db for a command that works on one
// (keys, users, reports): unless create is true, a SQLite file that does
// not exist is refused, not made — a mistyped -data must not create an
// empty store. Only the commands that add the first credential (users
// add, keys create) make one, so that they can run before the first
// serve. A PostgreSQL or MySQL database must exist anyway (the connection
// says so); its tables are made as serve makes them.
func openExisting(ctx context.Context, db string, create bool, stderr io.Writer) (store.Store, error) {
	if !create && !strings.Contains(db, "://") {
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no store at %s: check -data or -db (marquee serve makes one at its first start)", db)
		}
	}
	return openStore(ctx, db, jsonLog(stderr))
}

const keysUsage = `usage: marquee keys <subcommand> [flags]

API keys for programs, against the store (a running server sees the
change through the changelog). Each subcommand answers -h.

  create -name N -scopes a,b [-expires RFC3339]   a key; its secret is printed once
  list                                            every key, with its state and last use
  revoke -id N                                    revoke a key on every instance
`

// runKeys is `marquee keys create|list|revoke`: API keys against the
// store, for bootstrapping and scripts. A running server sees the change
// through the changelog.
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, keysUsage, stdout)
	if err != nil {
		return err
	}
	var fs *flag.FlagSet
	var data, db, name, scopes, expires *string
	var id *int64
	switch sub {
	case "create":
		fs, data, db = accessFlags("keys create", "keys create -name N -scopes a,b [-expires RFC3339]", "Creates an API key and prints its secret (shown only now).", stderr)
		name = fs.String("name", "", "what the key is for")
		scopes = fs.String("scopes", "", "comma-separated, of: "+scopeNames())
		expires = fs.String("expires", "", "when the key stops working, RFC 3339 (empty: never)")
	case "list":
		fs, data, db = accessFlags("keys list", "keys list", "Lists every key: id, visible prefix, name, scopes, state and last use.", stderr)
	case "revoke":
		fs, data, db = accessFlags("keys revoke", "keys revoke -id N", "Revokes a key: every instance refuses it within a second.", stderr)
		id = fs.Int64("id", 0, "the key to revoke")
	default:
		return unknownSubcommand("keys", sub, "create", "list", "revoke")
	}
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	var in marquee.KeyInput
	switch sub {
	case "create":
		body := map[string]any{"name": *name, "scopes": strings.Split(*scopes, ",")}
		if *expires != "" {
			body["expiresAt"] = *expires
		}
		raw, _ := json.Marshal(body)
		if in, err = marquee.ParseKeyInput(raw, time.Now()); err != nil {
			return err
		}
	case "revoke":
		if *id <= 0 {
			return errors.New("keys revoke: -id N is required (marquee keys list shows the ids)")
		}
	}
	st, err := openExisting(ctx, dataDB(*data, *db), sub == "create", stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "create":
		secret, hash := auth.NewSecret(auth.KeyPrefix)
		k, err := st.CreateKey(cliAudit(ctx, "create", "name", "scopes", "expiresAt"),
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
		if err := st.RevokeKey(cliAudit(ctx, "revoke"), *id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked key %d\n", *id)
	}
	return nil
}

// cliAudit is ctx with the audit of a change made from the command line.
func cliAudit(ctx context.Context, action string, fields ...string) context.Context {
	return marquee.WithAudit(ctx, marquee.Audit{Actor: cliActor, IP: "local", Action: action, Fields: fields})
}

const usersUsage = `usage: marquee users <subcommand> [flags]

The people who sign in to the console and the API, against the store (a
running server sees the change through the changelog). A password is typed
at a prompt (not echoed) or read from the first line of standard input.
Each subcommand answers -h.

  list                                                every user: id, email, role
  add -email E -role owner|admin|editor|viewer        a user (password from the prompt or stdin)
  role -email E -role R                               change a user's role (ends their sessions)
  password -email E                                   set a user's password (ends their sessions)
  remove -email E                                     delete a user (the last owner stays)
`

// runUsers is `marquee users list|add|role|password|remove`: users
// against the store, for bootstrapping and for an operator locked out of
// the console.
func runUsers(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, usersUsage, stdout)
	if err != nil {
		return err
	}
	what, ok := map[string][2]string{
		"list":     {"users list", "Lists every user: id, email and role."},
		"add":      {"users add -email E -role R [-advertisers IDS | -sites NAMES]", "Adds a user; the password is typed at a prompt or read from standard input. An advertiser user names its advertisers, a publisher user its sites."},
		"role":     {"users role -email E -role R [-advertisers IDS | -sites NAMES]", "Changes a user's role (and an advertiser's or publisher's bounds); their sessions end."},
		"password": {"users password -email E", "Sets a user's password (typed at a prompt or read from standard input); their sessions end."},
		"remove":   {"users remove -email E", "Deletes a user; the last owner cannot be removed."},
	}[sub]
	if !ok {
		return unknownSubcommand("users", sub, "list", "add", "role", "remove", "password")
	}
	fs, data, db := accessFlags("users "+sub, what[0], what[1], stderr)
	var email, role, advertisers, sites *string
	if sub != "list" {
		email = fs.String("email", "", "the user's email")
	}
	roles := strings.Join(marquee.Roles, ", ")
	switch sub {
	case "add":
		role = fs.String("role", marquee.RoleViewer, roles)
	case "role":
		role = fs.String("role", "", "the new role: "+roles)
	}
	if role != nil {
		advertisers = fs.String("advertisers", "", "an advertiser user's advertisers: ids, comma-separated")
		sites = fs.String("sites", "", "a publisher user's sites, comma-separated")
	}
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	// What a change sets, checked as the API checks it.
	body := map[string]any{}
	if email != nil {
		body["email"] = *email
	}
	if role != nil {
		body["role"] = *role
		body["advertisers"], body["sites"] = splitList(*advertisers, true), splitList(*sites, false)
	}
	if sub == "add" || sub == "password" {
		if body["password"], err = readPassword(stdin, stderr); err != nil {
			return err
		}
	}
	raw, _ := json.Marshal(body)
	in, err := marquee.ParseUserInput(raw, sub == "add")
	if err != nil && sub != "list" {
		return err
	}
	var bounds marquee.Bounds
	if in.Bounds != nil {
		bounds = *in.Bounds
	}
	if role != nil {
		if p := marquee.CheckRoleBounds(*in.Role, bounds); len(p) > 0 {
			return marquee.Invalid("invalid user", p)
		}
	}
	st, err := openExisting(ctx, dataDB(*data, *db), sub == "add", stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	if sub == "list" {
		users, err := st.Users(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, "id\temail\trole")
		for _, u := range users {
			fmt.Fprintf(stdout, "%d\t%s\t%s%s\n", u.ID, u.Email, u.Role, boundsText(u.Bounds))
		}
		return nil
	}
	var hash string
	if in.Password != nil {
		if hash, err = auth.HashPassword(*in.Password); err != nil {
			return err
		}
	}
	if sub == "add" {
		for _, id := range bounds.Advertisers {
			if _, err := st.Advertiser(ctx, id); err != nil {
				return fmt.Errorf("users add: advertiser %d: %w", id, err)
			}
		}
		u, err := st.CreateUser(cliAudit(ctx, "create", append([]string{"email", "role", "password"}, bounds.Fields()...)...), marquee.User{Email: *in.Email, Role: *in.Role, Bounds: bounds}, hash)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added user %d %s (%s)\n", u.ID, u.Email, u.Role)
		return nil
	}
	u, _, err := st.UserLogin(ctx, *in.Email)
	if err != nil {
		return fmt.Errorf("users %s: no user %s (marquee users list shows them)", sub, *in.Email)
	}
	switch sub {
	case "role":
		for _, id := range bounds.Advertisers {
			if _, err := st.Advertiser(ctx, id); err != nil {
				return fmt.Errorf("users role: advertiser %d: %w", id, err)
			}
		}
		if _, err := st.UpdateUser(cliAudit(ctx, "update", append([]string{"role"}, bounds.Fields()...)...), u.ID, marquee.UserChange{Role: in.Role, Bounds: &bounds}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %d %s is now %s\n", u.ID, u.Email, *in.Role)
	case "password":
		if _, err := st.UpdateUser(cliAudit(ctx, "update", "password"), u.ID, marquee.UserChange{PasswordHash: &hash}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "set the password of user %d %s\n", u.ID, u.Email)
	case "remove":
		if err := st.DeleteUser(cliAudit(ctx, "delete"), u.ID, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed user %d %s\n", u.ID, u.Email)
	}
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

// scopeNames lists every scope, comma-separated.
func scopeNames() string {
	names := make([]string, len(marquee.Scopes))
	for i, sc := range marquee.Scopes {
		names[i] = string(sc)
	}
	return strings.Join(names, ", ")
}

// splitList is a flag's comma-separated values as a body's array gives
// them: ids (JSON numbers when they are digits, so that ParseUserInput
// names a bad one) or names; nil when empty.
func splitList(v string, ids bool) []any {
	var out []any
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if n, err := strconv.ParseInt(part, 10, 64); err == nil && ids {
			out = append(out, n)
		} else {
			out = append(out, part)
		}
	}
	return out
}

// boundsText is what an advertiser's or a publisher's user is bound to,
// as users list shows it after the role ("" for the others).
func boundsText(b marquee.Bounds) string {
	var parts []string
	for _, id := range b.Advertisers {
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	switch {
	case len(parts) > 0:
		return " (advertisers " + strings.Join(parts, ",") + ")"
	case len(b.Sites) > 0:
		return " (sites " + strings.Join(b.Sites, ",") + ")"
	}
	return ""
}
