// Package tmpfs gives tests a real, small filesystem that fills up: a
// tmpfs mounted for the test (as root; the test skips elsewhere), and a
// way to fill it and give the space back.
package tmpfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes on a new directory and unmounts it
// when the test ends. Without root (or mount) the test is skipped with a
// message.
func Mount(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Fill writes zeros into a new file under dir until the filesystem is
// full, and returns the file's path: removing or truncating it gives the
// space back.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "filler-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return filepath.Clean(f.Name())
			}
			t.Fatal(err)
		}
	}
}
