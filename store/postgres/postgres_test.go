package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"marquee/store/postgres"
	"marquee/store/postgres/pgtest"
	"marquee/store/storetest"
)

// A database from before link domains keeps its links, and its ids go on
// from theirs.
func TestUpgradeLinks(t *testing.T) {
	dsn := pgtest.DSN(t)
	storetest.UpgradeLinks(t, dsn, postgres.Open, func(q string) error {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(context.Background(), q)
		return err
	})
}

func TestConformance(t *testing.T) {
	storetest.Run(t, pgtest.DSN, postgres.Open)
}
