// Package mysqltest gives tests a MySQL or MariaDB database of their own.
package mysqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"

	mstore "marquee/store/mysql"
)

// DSN returns the DSN (mysql://…) of a fresh database on the server named
// by MARQUEE_TEST_MYSQL, dropped when t ends; it skips t when the variable
// is unset. Each test gets its own database, so tests run in parallel.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("MARQUEE_TEST_MYSQL")
	if base == "" {
		t.Skip("MARQUEE_TEST_MYSQL is not set: skipping a test that needs MySQL or MariaDB (e.g. MARQUEE_TEST_MYSQL=mysql://root@127.0.0.1:3306/test)")
	}
	db := admin(t, base)
	raw := make([]byte, 6)
	rand.Read(raw)
	name := "t_" + hex.EncodeToString(raw)
	// The name is ours (hex), so it can be spelled in the statement.
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("MARQUEE_TEST_MYSQL: create database: %v", err)
	}
	t.Cleanup(func() {
		db.Exec("DROP DATABASE IF EXISTS " + name)
		db.Close()
	})
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

// admin opens a connection pool on the server of dsn.
func admin(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	cfg, err := mstore.Config(dsn)
	if err != nil {
		t.Fatalf("MARQUEE_TEST_MYSQL: %v", err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("MARQUEE_TEST_MYSQL: %v", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	if err := db.PingContext(context.Background()); err != nil {
		t.Fatalf("MARQUEE_TEST_MYSQL: %v", err)
	}
	return db
}

// Raw opens a pool on the database of dsn (a DSN from DSN), closed when
// t ends, for tests that change it behind a store's back.
func Raw(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db := admin(t, dsn)
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	return db
}

// KillConnections has the server end every connection to the database of
// dsn but the one asking (KILL CONNECTION), as a restart or an operator
// would, and returns how many it ended.
func KillConnections(t testing.TB, dsn string) int {
	t.Helper()
	db := Raw(t, dsn)
	rows, err := db.Query(`SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID()`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	killed := 0
	for _, id := range ids {
		// The id is the server's number, so it can be spelled in the statement.
		if _, err := db.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
			killed++
		}
	}
	return killed
}
