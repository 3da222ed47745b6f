// Package objstore ships finished event files to S3-compatible object
// storage (AWS S3, MinIO, R2, GCS interop, …) with minio-go.
package objstore

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
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
