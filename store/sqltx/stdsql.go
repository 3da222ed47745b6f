package sqltx

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// StdQuerier is what a database/sql pool, transaction and connection
// share.
type StdQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// Std adapts a database/sql pool, transaction or connection (Q) to DB.
// With Stmts set, Exec and QueryRow run statements prepared once per
// query and kept there (for a pool: until it closes; for a transaction:
// until it ends, which closes them); Query never prepares.
type Std struct {
	Q     StdQuerier
	Stmts *sync.Map
}

// Exec runs a statement and returns how many rows it affected.
func (c Std) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if c.Stmts == nil {
		res, err = c.Q.ExecContext(ctx, query, args...)
	} else {
		var st *sql.Stmt
		if st, err = c.prepared(ctx, query); err == nil {
			res, err = st.ExecContext(ctx, args...)
		}
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRow runs a query that returns at most one row.
func (c Std) QueryRow(ctx context.Context, query string, args ...any) Row {
	if c.Stmts == nil {
		return stdRow{r: c.Q.QueryRowContext(ctx, query, args...)}
	}
	st, err := c.prepared(ctx, query)
	if err != nil {
		return stdRow{err: err}
	}
	return stdRow{r: st.QueryRowContext(ctx, args...)}
}

// Query runs a query.
func (c Std) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	r, err := c.Q.QueryContext(ctx, query, args...)
	return stdRows{r}, err
}

// prepared returns query's kept statement, preparing it the first time.
func (c Std) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.Stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.Q.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.Stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// stdRow is a result row, or the error of preparing its query.
type stdRow struct {
	r   *sql.Row
	err error
}

func (r stdRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoRows
	}
	return err
}

type stdRows struct{ *sql.Rows }

func (r stdRows) Close() { r.Rows.Close() }
