package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"marquee/collector"
	"marquee/eventline"
	"marquee/privacy"
)

const privacyUsage = `usage: marquee privacy export -user KEY [-data DIR] [-privacy MODE] [-privacy-key K | -tracking-key K]

export prints, as one JSON document, what the event files under
<data>/events hold about the visitor of a user key: the events whose uid
is the key's pseudonym (or, in privacy mode off, the key itself), found
with the server's secret. Run it with the server's -privacy and key flags
(or its data directory, which keeps the generated key). Shipped files are
in the bucket: fetch them to <data>/events to search them too.
`

// runPrivacy is marquee privacy export: a data subject's access request.
func runPrivacy(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub, err := subcommand(args, privacyUsage, stdout)
	if err != nil {
		return err
	}
	if sub != "export" {
		return unknownSubcommand("privacy", sub, "export")
	}
	fs := newFlags("privacy export", "privacy export -user KEY", "Prints what the event files hold about a user key.", stderr)
	var cfg serveConfig
	fs.StringVar(&cfg.data, "data", "./data", "the server's data directory")
	fs.StringVar(&cfg.privacy, "privacy", "balanced", "the server's -privacy")
	fs.StringVar(&cfg.privacyKey, "privacy-key", "", "the server's -privacy-key")
	fs.StringVar(&cfg.trackingKey, "tracking-key", "", "the server's -tracking-key (default: the key kept under -data)")
	user := fs.String("user", "", "the user key (required)")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	if *user == "" {
		return errors.New("privacy export: -user is required")
	}
	if cfg.trackingKey == "" && cfg.privacyKey == "" {
		if _, err := os.Stat(filepath.Join(cfg.data, "tracking-key")); err != nil {
			return fmt.Errorf("privacy export: no key: give -privacy-key or -tracking-key, or the -data of the server (%w)", err)
		}
	}
	key, err := serverKey(cfg)
	if err != nil {
		return err
	}
	pol, err := privacyPolicy(cfg, key)
	if err != nil {
		return err
	}
	out, err := exportSubject(ctx, filepath.Join(cfg.data, "events"), pol, []byte(*user))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// subjectExport is what privacy export prints.
type subjectExport struct {
	Mode string `json:"mode"`
	// Pseudonyms are the uids the key had in the events found (strict:
	// one a day).
	Pseudonyms []string          `json:"pseudonyms"`
	Events     []json.RawMessage `json:"events"`
	Files      int               `json:"filesSearched"`
}

// exportSubject reads every event file of the spool at dir and keeps the
// lines whose uid is user's under pol on the line's day.
func exportSubject(ctx context.Context, dir string, pol *privacy.Policy, user []byte) (subjectExport, error) {
	out := subjectExport{Mode: pol.Mode().String(), Pseudonyms: []string{}, Events: []json.RawMessage{}}
	files, err := collector.FinishedFiles(dir)
	if err != nil {
		return out, err
	}
	var f eventline.Fields
	var uid []byte
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		var buf bytes.Buffer
		if err := catFile(name, &buf); err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		out.Files++
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !eventline.Scan(line, &f) || len(f[eventline.UID]) == 0 {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, string(f[eventline.ReceivedAt]))
			if err != nil {
				continue
			}
			uid, _, _ = pol.AppendUID(uid[:0], user, at, privacy.None)
			if !bytes.Equal(f[eventline.UID], uid) {
				continue
			}
			out.Events = append(out.Events, json.RawMessage(slices.Clone(line)))
			if s := string(uid); pol.Mode() != privacy.Off && !slices.Contains(out.Pseudonyms, s) {
				out.Pseudonyms = append(out.Pseudonyms, s)
			}
		}
		if err := sc.Err(); err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}
