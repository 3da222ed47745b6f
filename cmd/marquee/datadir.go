package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// kept returns the value kept in the file name under the data dir, or,
// when there is none (or it is blank), one made by generate, which it
// writes there with mode perm and reports as made.
func kept(data, name string, perm os.FileMode, generate func() string) (v string, made bool, err error) {
	path := filepath.Join(data, name)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), false, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	v = generate()
	if err := os.MkdirAll(data, 0o700); err != nil { // secrets inside: the owner's alone
		return "", false, err
	}
	return v, true, os.WriteFile(path, []byte(v+"\n"), perm)
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
