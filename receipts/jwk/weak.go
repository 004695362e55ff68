package jwk

import "math/big"

// The Ed25519 public keys under which anyone can make a signature that
// checks (the eight points of small order), and every encoding whose y is
// not below p, are refused (format description §3.8). The same test applies
// to the R half of every Ed25519 signature.
var (
	curveP      = littleEndian32(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19)))
	smallOrderY = smallOrder()
)

func smallOrder() [][32]byte {
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	y8, ok := new(big.Int).SetString("7a03ac9277fdc74ec6cc392cfa53202a0f67100d760b3cba4fd84d3d706a17c7", 16)
	if !ok {
		panic("jwk: bad constant")
	}
	ys := []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Sub(p, big.NewInt(1)), y8, new(big.Int).Sub(p, y8)}
	out := make([][32]byte, len(ys))
	for i, y := range ys {
		out[i] = littleEndian32(y)
	}
	return out
}

func littleEndian32(n *big.Int) [32]byte {
	var be, le [32]byte
	n.FillBytes(be[:])
	for i := range 32 {
		le[i] = be[31-i]
	}
	return le
}

// WeakEd25519 reports whether 32 bytes are an Ed25519 point under which
// anyone can sign, or one written in more than one way: y (little-endian,
// sign bit cleared) is at least p, or is the y of a point of small order.
// Anything not 32 bytes long counts as weak.
func WeakEd25519(b []byte) bool {
	if len(b) != 32 {
		return true
	}
	var y [32]byte
	copy(y[:], b)
	y[31] &= 0x7f
	if !lessLE(y, curveP) {
		return true
	}
	for _, s := range smallOrderY {
		if y == s {
			return true
		}
	}
	return false
}

// lessLE compares two little-endian 256-bit numbers.
func lessLE(a, b [32]byte) bool {
	for i := 31; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
