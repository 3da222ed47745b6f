// Package objstore ships finished event files to S3-compatible object
// storage (AWS S3, MinIO, R2, GCS interop, …) with minio-go, and keeps
// creatives' images there when it is configured.
package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"marquee"
)

// S3Config locates a bucket.
type S3Config struct {
	// URL is s3://bucket/prefix (the prefix may be empty).
	URL string
	// Endpoint is host[:port] of the service (default s3.amazonaws.com);
	// Insecure talks plain HTTP to it.
	Endpoint string
	Insecure bool
	Region   string
	// AccessKey and SecretKey sign requests; both empty means anonymous.
	AccessKey, SecretKey string
}

// S3 stores files as objects under a bucket and prefix.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string
}

// NewS3 returns a shipper to the bucket of cfg. It does not contact the
// service: a bucket that is unreachable at start fails the first uploads,
// which are retried.
func NewS3(cfg S3Config) (*S3, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("events S3 URL %q: want s3://bucket/prefix", cfg.URL)
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	var creds *credentials.Credentials
	if cfg.AccessKey != "" || cfg.SecretKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	} else {
		creds = credentials.New(&credentials.Static{}) // anonymous
	}
	client, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: !cfg.Insecure, Region: cfg.Region,
		BucketLookup: minio.BucketLookupAuto})
	if err != nil {
		return nil, fmt.Errorf("events S3: %w", err)
	}
	return &S3{client: client, bucket: u.Host, prefix: strings.Trim(u.Path, "/")}, nil
}

// Ship uploads the file at filePath as prefix/key and returns once the
// service has confirmed it.
func (s *S3) Ship(ctx context.Context, key, filePath string) error {
	_, err := s.client.FPutObject(ctx, s.bucket, path.Join(s.prefix, key), filePath,
		minio.PutObjectOptions{ContentType: contentType(key)})
	return err
}

func contentType(key string) string {
	switch {
	case strings.HasSuffix(key, ".lz4"):
		return "application/x-lz4"
	case strings.HasSuffix(key, ".zst"):
		return "application/zstd"
	}
	return "application/x-ndjson"
}

// Put stores body as prefix/key with its content type.
func (s *S3) Put(ctx context.Context, key string, body []byte, contentType string) error {
	_, err := s.client.PutObject(ctx, s.bucket, path.Join(s.prefix, key), bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: contentType})
	return err
}

// Get returns the object prefix/key; one that does not exist is a
// marquee.KindNotFound error.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, path.Join(s.prefix, key), minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return nil, marquee.Errorf(marquee.KindNotFound, "no object %q", key)
	}
	return b, err
}

// AssetMeta is what Assets keeps in the database: an asset's facts (its
// bytes are in the bucket).
type AssetMeta interface {
	PutAsset(ctx context.Context, a marquee.Asset, body []byte) (marquee.Asset, bool, error)
	Asset(ctx context.Context, sha string) (marquee.Asset, []byte, error)
}

// Assets keeps creatives' images in the bucket, under prefix/assets/,
// and their facts in Meta (with no bytes): what serve uses when
// -events-s3 is set, so that the database does not grow with images.
// Its methods are those of the store it stands in for.
type Assets struct {
	Meta AssetMeta
	S3   *S3
}

// PutAsset uploads the image, then records it; the same image again is
// uploaded again (the key is its hash: the object is the same).
func (a Assets) PutAsset(ctx context.Context, as marquee.Asset, body []byte) (marquee.Asset, bool, error) {
	if err := a.S3.Put(ctx, "assets/"+strings.TrimPrefix(as.Path(), marquee.AssetPrefix), body, as.Type); err != nil {
		return as, false, fmt.Errorf("store asset in S3: %w", err)
	}
	return a.Meta.PutAsset(ctx, as, []byte{})
}

// Asset reads an asset's facts, then its bytes from the bucket (or from
// the database, for one stored there before the bucket was configured).
func (a Assets) Asset(ctx context.Context, sha string) (marquee.Asset, []byte, error) {
	as, body, err := a.Meta.Asset(ctx, sha)
	if err != nil || len(body) > 0 {
		return as, body, err
	}
	body, err = a.S3.Get(ctx, "assets/"+strings.TrimPrefix(as.Path(), marquee.AssetPrefix))
	return as, body, err
}
