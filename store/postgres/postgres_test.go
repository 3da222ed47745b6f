package postgres_test

import (
	"context"
	"testing"

	"marquee/store/postgres"
	"marquee/store/postgres/pgtest"
	"marquee/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Store, func() storetest.Store) {
		dsn := pgtest.DSN(t)
		open := func() storetest.Store {
			st, err := postgres.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		return open(), open
	})
}
