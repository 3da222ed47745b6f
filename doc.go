// Package marquee holds Marquee's vocabulary: ads and their targeting
// conditions, how they are validated, and the error kinds every other
// package maps to. It imports only the standard library.
//
// The mechanisms live in sub-packages: index (the in-memory ad index that
// answers GET /api/v1/ad), store/sqlite (the embedded store), web (the HTTP
// edge) and cmd/marquee (the binary that wires them together).
package marquee
