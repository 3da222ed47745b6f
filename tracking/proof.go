package tracking

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// Render proofs (docs/ivt.md#render-proofs): a short-lived value the tag
// obtains for a decision once its ad rendered (GET /p/{token}), and sends
// with the decision's billable hits (?rp=…); a placement that asks for one
// bills no hit without it.

// ProofPeriod is a render proof's time step: a proof is made for the
// step it is asked in and checks during that step and the two after it
// (10 to 15 minutes).
const ProofPeriod = 5 * time.Minute

// proofLen is the bytes of a proof's MAC kept: 96 bits, 16 characters.
const proofLen = 12

// AppendRenderProof appends to dst the render proof of decision at t: the
// base64url of an HMAC, under the current key, of the decision's id and
// t's step.
func (s *Signer) AppendRenderProof(dst []byte, decision [16]byte, t time.Time) []byte {
	return s.appendProof(dst, s.key, decision, t.Unix()/int64(ProofPeriod/time.Second))
}

func (s *Signer) appendProof(dst, key []byte, decision [16]byte, step int64) []byte {
	var msg [7 + 16 + 8]byte
	copy(msg[:], "render\x00")
	copy(msg[7:], decision[:])
	binary.BigEndian.PutUint64(msg[23:], uint64(step))
	m := s.macs.Get().(*pooledMAC)
	defer s.macs.Put(m)
	h := m.h
	if !hmac.Equal(key, s.key) { // the previous key's: not pooled (rare, while keys rotate)
		h = hmac.New(sha256.New, key)
	}
	h.Reset()
	h.Write(msg[:])
	return enc.AppendEncode(dst, h.Sum(m.sum[:0])[:proofLen])
}

// CheckRenderProof reports whether proof is decision's render proof made
// at most two steps before now's (under the current or the previous key).
func (s *Signer) CheckRenderProof(proof []byte, decision [16]byte, now time.Time) bool {
	if len(proof) != enc.EncodedLen(proofLen) {
		return false
	}
	step := now.Unix() / int64(ProofPeriod/time.Second)
	var buf [32]byte
	for _, key := range [][]byte{s.key, s.previous} {
		if len(key) == 0 {
			continue
		}
		for back := int64(0); back <= 2; back++ {
			if hmac.Equal(s.appendProof(buf[:0], key, decision, step-back), proof) {
				return true
			}
		}
	}
	return false
}
