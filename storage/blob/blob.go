// Package blob wraps minio-go: the object store for images, imports and proofs.
package blob

import (
	"context"
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store is one bucket on an S3-compatible endpoint.
type Store struct {
	client *minio.Client
	bucket string
}

// Options locate the bucket.
type Options struct {
	Endpoint  string // host:port
	AccessKey string
	SecretKey string
	Bucket    string
	UseTLS    bool
}

// Open connects to the endpoint; it does not touch the network.
func Open(opts Options) (*Store, error) {
	c, err := minio.New(opts.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, ""),
		Secure: opts.UseTLS,
	})
	if err != nil {
		return nil, fmt.Errorf("object store client: %w", err)
	}
	return &Store{client: c, bucket: opts.Bucket}, nil
}

// EnsureBucket creates the bucket when missing.
func (s *Store) EnsureBucket(ctx context.Context) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("check bucket %s: %w", s.bucket, err)
	}
	if exists {
		return nil
	}
	if err := s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("create bucket %s: %w", s.bucket, err)
	}
	return nil
}

// Ping checks the endpoint answers and the bucket exists.
func (s *Store) Ping(ctx context.Context) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	if !exists {
		return fmt.Errorf("object store: bucket %s missing", s.bucket)
	}
	return nil
}
