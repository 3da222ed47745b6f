// Package kafka publishes events to a Kafka topic with franz-go
// (github.com/twmb/franz-go/pkg/kgo, pure Go): an idempotent producer
// (no duplicates from its own retries, order kept per partition), with
// LZ4 batches by default. Each event is a record keyed by its ad, link or
// user (the partitioner sends one key to one partition: its events keep
// their order), with the event's id in its "eid" header.
package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"marquee/streams"
)

// Options are the options of -events-kafka this package reads.
var Options = []string{"brokers", "topic", "compression", "create", "tls", "tls-ca", "tls-server-name", "sasl", "user", "password"}

// Broker produces to one topic. Publish is called by one goroutine at a
// time.
type Broker struct {
	cl   *kgo.Client
	recs []*kgo.Record
	pool []kgo.Record
}

// Open makes a producer for opts: brokers (host:port, comma-separated)
// and topic, required; compression (lz4, zstd, snappy, gzip or none;
// default lz4); create=true to let the cluster create the topic; tls=true
// (with tls-ca, a PEM file, and tls-server-name when needed); sasl (plain,
// scram-sha-256 or scram-sha-512) with user and password. The cluster
// need not be up: records wait and are retried.
func Open(opts map[string]string) (*Broker, error) {
	brokers, topic := opts["brokers"], opts["topic"]
	if brokers == "" || topic == "" {
		return nil, errors.New("-events-kafka: brokers= and topic= are required")
	}
	kopts := []kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic),
		kgo.RecordDeliveryTimeout(20 * time.Second), kgo.ProduceRequestTimeout(10 * time.Second),
		kgo.ClientID("marquee")}
	switch c := opts["compression"]; c {
	case "", "lz4":
		kopts = append(kopts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "zstd":
		kopts = append(kopts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	case "snappy":
		kopts = append(kopts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case "gzip":
		kopts = append(kopts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case "none":
		kopts = append(kopts, kgo.ProducerBatchCompression(kgo.NoCompression()))
	default:
		return nil, fmt.Errorf("-events-kafka: compression=%q: want lz4, zstd, snappy, gzip or none", c)
	}
	flag := func(name string) (bool, error) {
		if opts[name] == "" {
			return false, nil
		}
		v, err := strconv.ParseBool(opts[name])
		if err != nil {
			return false, fmt.Errorf("-events-kafka: %s=%q: want true or false", name, opts[name])
		}
		return v, nil
	}
	if create, err := flag("create"); err != nil {
		return nil, err
	} else if create {
		kopts = append(kopts, kgo.AllowAutoTopicCreation())
	}
	useTLS, err := flag("tls")
	if err != nil {
		return nil, err
	}
	if useTLS || opts["tls-ca"] != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: opts["tls-server-name"]}
		if ca := opts["tls-ca"]; ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, fmt.Errorf("-events-kafka: tls-ca: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("-events-kafka: tls-ca %s holds no PEM certificate", ca)
			}
		}
		kopts = append(kopts, kgo.DialTLSConfig(cfg))
	}
	user, password := opts["user"], opts["password"]
	switch s := opts["sasl"]; s {
	case "":
		if user != "" || password != "" {
			return nil, errors.New("-events-kafka: user and password need sasl= (plain, scram-sha-256 or scram-sha-512)")
		}
	case "plain":
		kopts = append(kopts, kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism()))
	case "scram-sha-256":
		kopts = append(kopts, kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha256Mechanism()))
	case "scram-sha-512":
		kopts = append(kopts, kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("-events-kafka: sasl=%q: want plain, scram-sha-256 or scram-sha-512", s)
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("-events-kafka: %w", err)
	}
	return &Broker{cl: cl}, nil
}

// Publish produces msgs and waits until the cluster has acknowledged
// every record (or one failed).
func (b *Broker) Publish(ctx context.Context, msgs []streams.Message) error {
	if cap(b.pool) < len(msgs) {
		b.pool = make([]kgo.Record, len(msgs))
	}
	recs := b.recs[:0]
	for i, m := range msgs {
		r := &b.pool[i]
		*r = kgo.Record{Key: m.Key, Value: m.Value, Headers: append(r.Headers[:0], kgo.RecordHeader{Key: "eid", Value: m.ID})}
		recs = append(recs, r)
	}
	b.recs = recs
	err := b.cl.ProduceSync(ctx, recs...).FirstErr()
	clear(recs)
	return err
}

// RunBytes is 0: a record is one event, keyed.
func (b *Broker) RunBytes() int { return 0 }

// Close flushes nothing (Publish waits) and closes the client.
func (b *Broker) Close() error {
	b.cl.Close()
	return nil
}
