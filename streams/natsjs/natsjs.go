// Package natsjs publishes events to NATS JetStream
// (github.com/nats-io/nats.go/jetstream) on one subject: by default each
// message a run of events as NDJSON (up to 64 KiB, one line an event, as
// in the files), or one event a message with message-bytes=0. A message's
// Nats-Msg-Id is its first event's id and its count of events
// (streams.Message), so that JetStream drops the copies a retry sends
// within the stream's duplicate window; its Marquee-Events header says
// how many events it holds. A stream keeps one order for all its
// messages, so one key's events keep theirs.
package natsjs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"marquee/streams"
)

// Options are the options of -events-nats this package reads.
var Options = []string{"url", "subject", "stream", "create", "message-bytes"}

// Broker publishes to a JetStream stream. Publish is called by one
// goroutine at a time.
type Broker struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	subject string
	stream  string
	create  bool // create the stream if absent, at the first publish
	run     int  // bytes of NDJSON a message holds at most; 0: one event a message
	mu      sync.Mutex
	ready   bool // the stream exists (or is not ours to create)
	futs    []jetstream.PubAckFuture
}

// Open connects to the server at opts["url"] (nats://, tls://; user and
// password or token in the URL), publishing to opts["subject"]. With
// create=true the stream opts["stream"] (default MARQUEE_EVENTS) is
// created on the subject if absent, on file storage. The server need not
// be up: the client reconnects for ever, and publishes fail until then.
func Open(opts map[string]string) (*Broker, error) {
	url, subject := opts["url"], opts["subject"]
	if url == "" || subject == "" {
		return nil, errors.New("-events-nats: url= and subject= are required")
	}
	b := &Broker{subject: subject, stream: opts["stream"], run: 64 << 10}
	if v := opts["message-bytes"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<20 {
			return nil, fmt.Errorf("-events-nats: message-bytes=%q: want bytes from 0 (one event a message) to 1048576 (NATS's default largest message)", v)
		}
		b.run = n
	}
	if b.stream == "" {
		b.stream = "MARQUEE_EVENTS"
	}
	if c := opts["create"]; c != "" {
		v, err := strconv.ParseBool(c)
		if err != nil {
			return nil, fmt.Errorf("-events-nats: create=%q: want true or false", c)
		}
		b.create = v
	}
	b.ready = !b.create
	nc, err := nats.Connect(url, nats.Name("marquee"), nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.Timeout(2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("-events-nats: %w", err)
	}
	b.nc = nc
	if b.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096), jetstream.WithPublishAsyncTimeout(5*time.Second)); err != nil {
		nc.Close()
		return nil, fmt.Errorf("-events-nats: %w", err)
	}
	return b, nil
}

// Publish sends msgs asynchronously and waits for every acknowledgement
// (an acknowledgement lost in a disconnection fails its publish after 5 s:
// the batch is sent again, and JetStream drops the copies).
func (b *Broker) Publish(ctx context.Context, msgs []streams.Message) error {
	if err := b.ensure(ctx); err != nil {
		return err
	}
	futs := b.futs[:0]
	defer func() { clear(futs); b.futs = futs[:0] }()
	for _, m := range msgs {
		f, err := b.js.PublishMsgAsync(&nats.Msg{Subject: b.subject, Data: m.Value,
			Header: nats.Header{jetstream.MsgIDHeader: {string(m.ID)}, "Marquee-Events": {strconv.Itoa(m.Events)}}})
		if err != nil {
			return err
		}
		futs = append(futs, f)
	}
	for _, f := range futs {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// RunBytes is how many bytes of NDJSON a message holds at most (0: one
// event a message).
func (b *Broker) RunBytes() int { return b.run }

// ensure creates the stream, when asked to, once.
func (b *Broker) ensure(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ready {
		return nil
	}
	_, err := b.js.CreateStream(ctx, jetstream.StreamConfig{Name: b.stream, Subjects: []string{b.subject},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create stream %s: %w", b.stream, err)
	}
	b.ready = true
	return nil
}

// Close closes the connection.
func (b *Broker) Close() error {
	b.nc.Close()
	return nil
}
