//go:build windows

package loadgen

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	ft := func(f windows.Filetime) time.Duration {
		return time.Duration(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) * 100 // 100 ns units
	}
	return ft(kernel) + ft(user)
}
