package marquee

import (
	"bytes"
	"fmt"
)

// The platforms, in their stored spelling.
const (
	PlatformAndroid = "android"
	PlatformIOS     = "ios"
	PlatformWeb     = "web"
)

// Platforms an ad may target (and reports break down by), in their stored
// spelling.
var Platforms = []string{PlatformAndroid, PlatformIOS, PlatformWeb}

// UAPlatform is the platform a User-Agent says: android when it holds
// Android, then ios for iPhone, iPad, iOS or CFNetwork (Apple's HTTP
// stack), else web.
func UAPlatform(ua []byte) string {
	switch {
	case bytes.Contains(ua, []byte("Android")):
		return PlatformAndroid
	case bytes.Contains(ua, []byte("iPhone")), bytes.Contains(ua, []byte("iPad")), bytes.Contains(ua, []byte("iOS")),
		bytes.Contains(ua, []byte("CFNetwork")):
		return PlatformIOS
	}
	return PlatformWeb
}

// PlatformProblem is what is wrong with s, a platform that is not one.
func PlatformProblem[T string | []byte](s T) string {
	return fmt.Sprintf("must be one of %q, %q, %q, got %q", PlatformAndroid, PlatformIOS, PlatformWeb, s)
}
