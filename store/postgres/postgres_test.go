package postgres_test

import (
	"testing"

	"marquee/store/postgres"
	"marquee/store/postgres/pgtest"
	"marquee/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, pgtest.DSN, postgres.Open)
}
