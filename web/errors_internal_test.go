package web

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"marquee"
)

// Every kind of error has its status: a kind added to the vocabulary
// without a line in statusOf would answer 0.
func TestEveryKindHasAStatus(t *testing.T) {
	for k := marquee.Kind(0); !strings.HasPrefix(k.String(), "kind("); k++ {
		if statusOf[k] < 400 {
			t.Errorf("statusOf[%v] = %d; want an error status", k, statusOf[k])
		}
	}
	if len(statusOf) < int(marquee.KindHeadersTooLarge)+1 {
		t.Errorf("statusOf has %d kinds; want every kind up to %v", len(statusOf), marquee.KindHeadersTooLarge)
	}
}

// fasthttp's own log lines never carry an error's text: a read error
// quotes the headers it read, secrets among them.
func TestFasthttpLogWithholdsErrorText(t *testing.T) {
	var b strings.Builder
	l := fasthttpLogger{slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	secret := errors.New(`invalid header value "a\x7fb": contents: "Cookie: marquee_session=s3cret"`)
	l.Printf("error when serving connection %q<->%q: %v", "127.0.0.1:8080", "127.0.0.1:5555", secret)
	if got := b.String(); strings.Contains(got, "s3cret") || !strings.Contains(got, "127.0.0.1:5555") {
		t.Errorf("log = %q; want the addresses and not the error's text", got)
	}
}
