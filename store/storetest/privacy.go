package storetest

import (
	"context"
	"math"
	"testing"

	"marquee"
)

// An erasure is one changelog entry per pseudonym — any uint64, carried
// bit for bit in the id — and one audit entry, by the name the request
// gives, in one transaction.
func testEraseSubject(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	before, err := st.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := []uint64{math.MaxUint64, 1, 1 << 63}
	actx := marquee.WithAudit(ctx, marquee.Audit{Actor: "key:dpo", IP: "192.0.2.1", Action: "erase", EntityID: "pseudonym-1"})
	if err := st.EraseSubject(actx, names); err != nil {
		t.Fatalf("EraseSubject = %v", err)
	}
	chs, err := st.Changes(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, c := range chs {
		if c.Entity == marquee.EntitySubject && c.Op == marquee.OpDelete {
			got = append(got, uint64(c.ID))
		}
	}
	if len(got) != len(names) || got[0] != names[0] || got[1] != names[1] || got[2] != names[2] {
		t.Fatalf("changelog's subject entries = %v; want %v in order", got, names)
	}
	log, n, err := st.AuditLog(ctx, marquee.AuditFilter{Entity: marquee.EntitySubject, Limit: 10})
	if err != nil || n != 1 || len(log) != 1 || log[0].EntityID != "pseudonym-1" || log[0].Action != "erase" || log[0].Actor != "key:dpo" {
		t.Fatalf("audit log = %+v, %d, %v; want one erase entry of pseudonym-1 by key:dpo", log, n, err)
	}
}
