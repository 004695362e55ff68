package jwk

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"

	"github.com/cloudflare/circl/sign/mldsa/mldsa87"
	"github.com/cloudflare/circl/sign/slhdsa"
)

// CanVerify reports whether this build can check signatures made with the
// key: every method the format knows, SLH-DSA-SHA2-256s included (circl's
// sign/slhdsa).
func (k *Key) CanVerify() bool { return k != nil }

// Verify reports whether sig is a valid signature by k over signingInput:
//   - Ed25519: 64 bytes (RFC 8032), and R is not a weak point (§3.8);
//   - ML-DSA-87: FIPS 204 pure ML-DSA with an empty context;
//   - ES256: raw r‖s, 64 bytes, over SHA-256;
//   - RS256: RSASSA-PKCS1-v1_5 with SHA-256;
//   - SLH-DSA-SHA2-256s: FIPS 205 pure SLH-DSA with an empty context.
func (k *Key) Verify(signingInput, sig []byte) bool {
	if k == nil {
		return false
	}
	switch k.Alg {
	case Ed25519:
		if len(sig) != ed25519.SignatureSize || len(k.ed) != ed25519.PublicKeySize || WeakEd25519(sig[:32]) {
			return false
		}
		return ed25519.Verify(k.ed, signingInput, sig)
	case MLDSA87:
		if k.ml == nil || len(sig) != mldsa87.SignatureSize {
			return false
		}
		return mldsa87.Verify(k.ml, signingInput, nil, sig)
	case ES256:
		if k.ec == nil || len(sig) != 64 {
			return false
		}
		h := sha256.Sum256(signingInput)
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k.ec, h[:], r, s)
	case RS256:
		if k.rsa == nil {
			return false
		}
		h := sha256.Sum256(signingInput)
		return rsa.VerifyPKCS1v15(k.rsa, crypto.SHA256, h[:], sig) == nil
	case SLHDSA256:
		if k.slh == nil || len(sig) != SLHDSA256SignatureSize {
			return false
		}
		return slhdsa.Verify(k.slh, slhdsa.NewMessage(signingInput), sig, nil)
	default:
		return false
	}
}
