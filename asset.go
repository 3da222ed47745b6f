package marquee

import (
	"strings"
	"time"
)

// Asset is an uploaded image a creative shows: content-addressed (by the
// SHA-256 of its bytes, so that the same image is stored once and its URL
// never changes), one of AssetTypes, with its size in pixels and bytes
// (docs/api.md#assets).
type Asset struct {
	SHA       string    `json:"sha256"`
	Type      string    `json:"type"`
	Width     int       `json:"width"`
	Height    int       `json:"height"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"-"`
}

// AssetTypes maps the media types an asset may be to the extension of
// its path. SVG is not one: an SVG can hold script.
var AssetTypes = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}

// MaxAssetBytes is the largest asset (the request that carries it, raw or
// as a multipart form, stays within the server's 1 MiB body limit).
const MaxAssetBytes = 1000 << 10

// AssetPrefix is where assets are served.
const AssetPrefix = "/assets/"

// Path is where the asset is served: /assets/<sha256>.<ext>.
func (a Asset) Path() string { return AssetPrefix + a.SHA + "." + AssetTypes[a.Type] }

// ParseAssetPath returns the SHA-256 and media type an asset path names,
// and whether it is one.
func ParseAssetPath(path string) (sha, typ string, ok bool) {
	if !IsAssetPath(path) {
		return "", "", false
	}
	name := strings.TrimPrefix(path, AssetPrefix)
	sha, ext, _ := strings.Cut(name, ".")
	for t, e := range AssetTypes {
		if e == ext {
			return sha, t, true
		}
	}
	return "", "", false
}

// NoAsset is the error of an unknown asset.
func NoAsset(path string) *Error { return Errorf(KindNotFound, "no asset %q", path) }
