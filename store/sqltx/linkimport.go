package sqltx

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"marquee"
)

// importBatch is how many rows of an import one look-up of stored links
// reads.
const importBatch = 500

// ImportLinks stores links in one transaction (marquee.ImportOptions): a
// link whose code is free on its domain is created (with a generated code
// when it has none), one whose code is taken is replaced or skipped, and
// one that is the same already is left alone. Each change is logged in
// the changelog, so every instance sees it. The ins are valid
// (LinkInput.Validate) and no two name the same code on one domain. A
// row that names an ad's tracking link fails the whole import, its index
// in ins named in the error's problems ("rows[i]"). progress is told how
// many rows are done, from 0 again if the transaction starts over.
func (s *Store) ImportLinks(ctx context.Context, ins []marquee.LinkInput, opt marquee.ImportOptions, progress func(done int)) (marquee.ImportResult, error) {
	if opt.DryRun {
		return withDB(ctx, s, "import links", func(db DB) (marquee.ImportResult, error) {
			return s.importLinks(ctx, db, nil, ins, opt, time.Time{}, progress)
		})
	}
	return write(ctx, s, "import links", func(tx Tx, now time.Time) (marquee.ImportResult, error) {
		return s.importLinks(ctx, tx, tx, ins, opt, now, progress)
	})
}

// importLinks is ImportLinks reading through db and writing through tx
// (nil: a dry run).
func (s *Store) importLinks(ctx context.Context, db DB, tx Tx, ins []marquee.LinkInput, opt marquee.ImportOptions, now time.Time,
	progress func(int)) (marquee.ImportResult, error) {
	var res marquee.ImportResult
	problems := marquee.Problems{}
	progress(0)
	for start := 0; start < len(ins); start += importBatch {
		batch := ins[start:min(start+importBatch, len(ins))]
		stored, err := storedLinks(ctx, db, batch)
		if err != nil {
			return res, err
		}
		for i, in := range batch {
			old, ok := stored[marquee.LinkKey(in.Domain, in.Code)]
			switch {
			case in.Code == "" || !ok:
				res.Created++
				if tx != nil {
					if _, err := s.insertLink(ctx, tx, in, false, now); err != nil {
						return res, fmt.Errorf("rows[%d]: %w", start+i, err)
					}
				}
			case old.owned:
				problems[fmt.Sprintf("rows[%d]", start+i)] = fmt.Sprintf("code %q is the tracking link of ad %d; change or delete the ad", in.Code, old.AdID)
			case opt.Skip:
				res.Skipped++
			case sameImported(&old.Link, &in):
				res.Unchanged++
			default:
				res.Updated++
				if tx != nil {
					if err := updateImported(ctx, tx, old.ID, in, now); err != nil {
						return res, fmt.Errorf("rows[%d]: %w", start+i, err)
					}
				}
			}
		}
		progress(start + len(batch))
	}
	return res, marquee.Invalid("invalid import", problems)
}

// importedLink is a stored link an import may replace.
type importedLink struct {
	marquee.Link
	owned bool
}

// storedLinks returns the stored links that batch names, by LinkKey.
func storedLinks(ctx context.Context, db DB, batch []marquee.LinkInput) (map[string]importedLink, error) {
	var args []any
	for _, in := range batch {
		if in.Code != "" {
			args = append(args, in.Domain, in.Code)
		}
	}
	out := map[string]importedLink{}
	if len(args) == 0 {
		return out, nil
	}
	links, err := query(ctx, db, func(r Rows) (importedLink, error) {
		var l importedLink
		var expires, owned int64
		var tags string
		err := r.Scan(&l.ID, &l.Domain, &l.Code, &l.URL, &l.Title, &tags, &expires, &l.MaxClicks, &l.Redirect, &l.AdID, &owned)
		if expires != 0 {
			l.ExpiresAt = time.UnixMilli(expires).UTC()
		}
		l.owned = owned != 0
		if err == nil {
			err = scanLinkJSON(&l.Link, tags, "", "")
		}
		return l, err
	}, `SELECT id, domain, code, url, title, tags, expires_at, max_clicks, redirect, ad_id, ad_owned FROM links
		WHERE (domain, code) IN (`+strings.TrimSuffix(strings.Repeat("(?, ?), ", len(args)/2), ", ")+`)`, args...)
	for _, l := range links {
		out[marquee.LinkKey(l.Domain, l.Code)] = l
	}
	return out, err
}

// sameImported reports whether an import of in would leave l as it is.
func sameImported(l *marquee.Link, in *marquee.LinkInput) bool {
	return l.URL == in.URL && l.Title == in.Title && slices.Equal(l.Tags, in.Tags) && l.ExpiresAt.Equal(in.ExpiresAt) &&
		l.MaxClicks == in.MaxClicks && l.Redirect == in.Redirect
}

// updateImported replaces what an import sets of link id, and logs it.
func updateImported(ctx context.Context, tx Tx, id int64, in marquee.LinkInput, now time.Time) error {
	tags, _, _, err := linkJSON(marquee.LinkInput{Tags: in.Tags})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE links SET url = ?, title = ?, tags = ?, expires_at = ?, max_clicks = ?, redirect = ?, updated_at = ? WHERE id = ?`,
		in.URL, in.Title, tags, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, now.UnixMilli(), id); err != nil {
		return err
	}
	if err := setTags(ctx, tx, id, in.Tags); err != nil {
		return err
	}
	return tx.LogChange(ctx, marquee.EntityLink, id, in.Code, marquee.OpPut)
}
