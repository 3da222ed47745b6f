//go:build windows

package collector

import "golang.org/x/sys/windows"

// statfs reports the free (to this user) and total bytes of the volume
// that holds dir.
func statfs(dir string) (free, total uint64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var avail, all, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &all, &totalFree); err != nil {
		return 0, 0, err
	}
	return avail, all, nil
}
