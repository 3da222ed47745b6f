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
		if s.cfg.ImportStart != "" {
			if _, err := tx.Exec(ctx, s.cfg.ImportStart); err != nil {
				return marquee.ImportResult{}, err
			}
		}
		return s.importLinks(ctx, tx, tx, ins, opt, now, progress)
	})
}

// importLinks is ImportLinks reading through db and writing through tx
// (nil: a dry run).
func (s *Store) importLinks(ctx context.Context, db DB, tx Tx, ins []marquee.LinkInput, opt marquee.ImportOptions, now time.Time,
	progress func(int)) (marquee.ImportResult, error) {
	var res marquee.ImportResult
	problems := marquee.Problems{}
	var changed []marquee.Change // the links made or changed, for the changelog
	generated := 0               // links made with generated codes (not in changed)
	progress(0)
	for start := 0; start < len(ins); start += importBatch {
		batch := ins[start:min(start+importBatch, len(ins))]
		stored, err := storedLinks(ctx, db, batch)
		if err != nil {
			return res, err
		}
		var fresh []marquee.LinkInput // new links with their codes, inserted together
		for i, in := range batch {
			old, ok := stored[marquee.LinkKey(in.Domain, in.Code)]
			switch {
			case in.Code == "":
				res.Created++
				generated++
				if tx != nil {
					// A generated code may clash: one at a time, as a create.
					if _, err := s.insertLink(ctx, unlogged{tx}, in, false, now); err != nil {
						return res, fmt.Errorf("rows[%d]: %w", start+i, err)
					}
				}
			case !ok:
				res.Created++
				fresh = append(fresh, in)
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
					changed = append(changed, marquee.Change{ID: old.ID, Key: in.Code})
				}
			}
		}
		if tx != nil && len(fresh) > 0 {
			made, err := insertImported(ctx, tx, fresh, now)
			if err != nil {
				return res, err
			}
			changed = append(changed, made...)
		}
		progress(start + len(batch))
	}
	if err := marquee.Invalid("invalid import", problems); err != nil || tx == nil {
		return res, err
	}
	return res, logImported(ctx, tx, changed, generated)
}

// importLogEach is how many changed links an import logs one by one;
// past it, one entry says any link may have changed (each instance then
// empties its link cache, instead of reading that many entries).
const importLogEach = 1000

// logImported writes the changelog entries of an import: one per link in
// changed, or one for every link when there are more than importLogEach,
// or links made with generated codes (which changed does not name).
func logImported(ctx context.Context, tx Tx, changed []marquee.Change, generated int) error {
	if len(changed) > importLogEach || generated > 0 {
		return tx.LogChange(ctx, marquee.EntityLink, 0, "", marquee.OpReload)
	}
	for _, c := range changed {
		if err := tx.LogChange(ctx, marquee.EntityLink, c.ID, c.Key, marquee.OpPut); err != nil {
			return err
		}
	}
	return nil
}

// unlogged is a Tx whose changes the caller logs (logImported).
type unlogged struct{ Tx }

func (unlogged) LogChange(context.Context, string, int64, string, marquee.ChangeOp) error { return nil }

// insertImported inserts new links that have their codes, importBatch at
// most, in one statement, then their tags, and returns them as changes.
func insertImported(ctx context.Context, tx Tx, ins []marquee.LinkInput, now time.Time) ([]marquee.Change, error) {
	const width = 13
	args := make([]any, 0, width*len(ins))
	for _, in := range ins {
		row, err := BulkLinkRow(in, now.UnixMilli())
		if err != nil {
			return nil, err
		}
		args = append(args, row...)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO links (`+strings.Join(BulkLinkColumns, ", ")+`) VALUES `+Tuples(len(ins), width), args...); err != nil {
		return nil, err
	}
	made, err := storedLinks(ctx, tx, ins)
	if err != nil {
		return nil, err
	}
	var tagArgs []any
	changes := make([]marquee.Change, 0, len(ins))
	for _, in := range ins {
		l := made[marquee.LinkKey(in.Domain, in.Code)]
		changes = append(changes, marquee.Change{ID: l.ID, Key: in.Code})
		for _, t := range in.Tags {
			tagArgs = append(tagArgs, t, l.ID)
		}
	}
	if len(tagArgs) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO link_tags (tag, link_id) VALUES `+Tuples(len(tagArgs)/2, 2), tagArgs...); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// importedLink is a stored link an import may replace.
type importedLink struct {
	marquee.Link
	owned bool
}

// storedLinks returns the stored links that batch names, by LinkKey: a
// look-up of (domain, code IN …) for each domain, which the unique index
// answers.
func storedLinks(ctx context.Context, db DB, batch []marquee.LinkInput) (map[string]importedLink, error) {
	byDomain := map[string][]any{}
	for _, in := range batch {
		if in.Code != "" {
			byDomain[in.Domain] = append(byDomain[in.Domain], in.Code)
		}
	}
	out := map[string]importedLink{}
	for domain, codes := range byDomain {
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
			WHERE domain = ? AND code IN (`+placeholders(len(codes))+`)`, append([]any{domain}, codes...)...)
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			out[marquee.LinkKey(l.Domain, l.Code)] = l
		}
	}
	return out, nil
}

// sameImported reports whether an import of in would leave l as it is.
func sameImported(l *marquee.Link, in *marquee.LinkInput) bool {
	return l.URL == in.URL && l.Title == in.Title && slices.Equal(l.Tags, in.Tags) && l.ExpiresAt.Equal(in.ExpiresAt) &&
		l.MaxClicks == in.MaxClicks && l.Redirect == in.Redirect
}

// updateImported replaces what an import sets of link id (logImported
// logs it).
func updateImported(ctx context.Context, tx Tx, id int64, in marquee.LinkInput, now time.Time) error {
	tags, _, _, err := linkJSON(marquee.LinkInput{Tags: in.Tags})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE links SET url = ?, title = ?, tags = ?, expires_at = ?, max_clicks = ?, redirect = ?, updated_at = ? WHERE id = ?`,
		in.URL, in.Title, tags, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, now.UnixMilli(), id); err != nil {
		return err
	}
	return setTags(ctx, tx, id, in.Tags)
}
