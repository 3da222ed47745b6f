package mysql_test

import (
	"testing"

	"marquee/store/mysql"
	"marquee/store/mysql/mysqltest"
	"marquee/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, mysqltest.DSN, mysql.Open)
}
