//go:build unix

package collector

import "syscall"

// statfs reports the free (to unprivileged users) and total bytes of the
// filesystem that holds dir.
func statfs(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}
