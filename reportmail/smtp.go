package reportmail

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/wneessen/go-mail"
)

// SMTP sends mail through an SMTP server (github.com/wneessen/go-mail).
type SMTP struct {
	host string
	from string
	opts []mail.Option
}

// NewSMTP returns a sender for -smtp's URL and -smtp-from's address:
//
//   - smtp://user:pass@host:587 — STARTTLS, required (the default port 587);
//   - smtps://user:pass@host:465 — TLS from the start (port 465);
//   - smtp://host:25?tls=none — no TLS, for a relay on this machine only
//     (a loopback address; refused for any other host).
//
// With a user the server must offer authentication (PLAIN, LOGIN or
// CRAM-MD5, the best it offers). tlsConfig, when not nil, is the TLS
// configuration (its roots: a private mail server's CA).
func NewSMTP(rawURL, from string, tlsConfig *tls.Config) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("-smtp %q: not a URL smtp://user:pass@host:587", redact(rawURL))
	}
	s := &SMTP{host: u.Hostname(), from: from, opts: []mail.Option{mail.WithTimeout(30 * time.Second)}}
	if from == "" {
		return nil, fmt.Errorf("-smtp-from is required with -smtp: the address reports are sent from")
	}
	port := 0
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("-smtp: bad port %q", p)
		}
	}
	noTLS := u.Query().Get("tls") == "none"
	switch {
	case u.Scheme == "smtps":
		s.opts = append(s.opts, mail.WithSSL(), mail.WithPort(cmp.Or(port, 465)))
	case u.Scheme == "smtp" && noTLS:
		ip, err := netip.ParseAddr(s.host)
		if (err != nil || !ip.IsLoopback()) && s.host != "localhost" {
			return nil, fmt.Errorf("-smtp: tls=none only for a relay on this machine (a loopback address), not %q", s.host)
		}
		s.opts = append(s.opts, mail.WithTLSPolicy(mail.NoTLS), mail.WithPort(cmp.Or(port, 25)))
	case u.Scheme == "smtp":
		s.opts = append(s.opts, mail.WithTLSPolicy(mail.TLSMandatory), mail.WithPort(cmp.Or(port, 587)))
	default:
		return nil, fmt.Errorf("-smtp %q: the scheme is smtp (STARTTLS) or smtps (TLS)", redact(rawURL))
	}
	if tlsConfig != nil {
		s.opts = append(s.opts, mail.WithTLSConfig(tlsConfig))
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		s.opts = append(s.opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(u.User.Username()), mail.WithPassword(pass))
	}
	return s, nil
}

// redact is an SMTP URL without its password (for errors and logs).
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Send sends m: one message to all its recipients, with its attachment.
func (s *SMTP) Send(ctx context.Context, m Mail) error {
	msg := mail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return fmt.Errorf("from %q: %w", s.from, err)
	}
	if err := msg.To(m.To...); err != nil {
		return fmt.Errorf("to %v: %w", m.To, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	if m.Attachment.Data == nil {
		return s.send(ctx, msg)
	}
	if err := msg.AttachReader(m.Attachment.Name, bytes.NewReader(m.Attachment.Data),
		mail.WithFileContentType(mail.ContentType(m.Attachment.ContentType))); err != nil {
		return err
	}
	return s.send(ctx, msg)
}

// SendText sends a plain-text email without an attachment (an
// invitation).
func (s *SMTP) SendText(ctx context.Context, to, subject, text string) error {
	return s.Send(ctx, Mail{To: []string{to}, Subject: subject, Text: text})
}

// send dials the server and sends msg.
func (s *SMTP) send(ctx context.Context, msg *mail.Msg) error {
	c, err := mail.NewClient(s.host, s.opts...)
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, msg)
}
