package answer

import (
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"
	"strconv"
	"strings"
)

// SHA-512 crypt ("$6$"), written from Ulrich Drepper's specification
// "Unix crypt using SHA-256 and SHA-512" (the algorithm of glibc's
// crypt(3) and mkpasswd -m sha-512).

const (
	// DefaultCryptRounds is the SHA-512 crypt round count when a setting
	// names none; such hashes carry no "rounds=" field.
	DefaultCryptRounds = 5000
	// minCryptRounds and maxCryptRounds bound "rounds=": values outside are
	// clamped, as the specification says.
	minCryptRounds = 1000
	// maxCryptRounds is the largest round count; see minCryptRounds.
	maxCryptRounds = 999_999_999

	cryptPrefix    = "$6$"
	roundsPrefix   = "rounds="
	cryptSaltMax   = 16
	cryptAlphabet  = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	generatedSalts = 16
)

// HashPassword returns the SHA-512 crypt hash of password with a random
// 16-character salt from crypto/rand and the default 5000 rounds, the form
// "$6$salt$hash" that global.root-password-hashed and /etc/shadow take.
//
// It fails, wrapping [ErrInvalid], for a password holding a NUL byte
// (crypt(3) stops at NUL, so such a password can never be typed), and when
// the system's random source fails.
func HashPassword(password string) (string, error) {
	return hashPassword(password, cryptPrefix)
}

// hashPassword hashes password with a new random salt after prefix
// ("$6$" or "$6$rounds=N$").
func hashPassword(password, prefix string) (string, error) {
	var raw [generatedSalts]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("hash password: read random salt: %w", err)
	}
	salt := make([]byte, generatedSalts)
	for i, b := range raw {
		salt[i] = cryptAlphabet[b&0x3f] // 64 symbols: no bias
	}
	h, err := CryptSHA512(password, prefix+string(salt))
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// CryptSHA512 computes crypt(3) with the SHA-512 method: setting is
// "$6$salt", "$6$rounds=N$salt" or a whole hash "$6$...$salt$hash" (the
// hash part is ignored, so CryptSHA512(pw, h) == h checks a password). The
// salt is cut to 16 characters and ends at the first "$"; N is clamped to
// [minCryptRounds, maxCryptRounds]. An explicit "rounds=" is kept in the
// result, even for 5000.
//
// Errors wrap [ErrInvalid]: a setting not starting with "$6$", a bad
// "rounds=" number, a salt with ":" or a newline, or a password with a NUL
// byte. Neither the password nor the setting appear in the error.
func CryptSHA512(password, setting string) (string, error) {
	if strings.IndexByte(password, 0) >= 0 {
		return "", fmt.Errorf("%w: password contains a NUL byte", ErrInvalid)
	}
	rest, ok := strings.CutPrefix(setting, cryptPrefix)
	if !ok {
		return "", fmt.Errorf("%w: crypt setting: want the SHA-512 form \"$6$[rounds=N$]salt\"", ErrInvalid)
	}
	rounds, custom := DefaultCryptRounds, false
	if r, ok := strings.CutPrefix(rest, roundsPrefix); ok {
		num, after, found := strings.Cut(r, "$")
		n, err := strconv.ParseUint(num, 10, 64)
		if !found || err != nil {
			return "", fmt.Errorf("%w: crypt setting: want rounds=N$ with N a decimal number", ErrInvalid)
		}
		rounds = int(min(max(n, minCryptRounds), maxCryptRounds))
		custom = true
		rest = after
	}
	salt, _, _ := strings.Cut(rest, "$")
	if len(salt) > cryptSaltMax {
		salt = salt[:cryptSaltMax]
	}
	if strings.ContainsAny(salt, ":\n\r") {
		return "", fmt.Errorf("%w: crypt setting: the salt may not hold \":\" or a line break", ErrInvalid)
	}

	sum := sha512Crypt([]byte(password), []byte(salt), rounds)

	var b strings.Builder
	b.WriteString(cryptPrefix)
	if custom {
		b.WriteString(roundsPrefix)
		b.WriteString(strconv.Itoa(rounds))
		b.WriteByte('$')
	}
	b.WriteString(salt)
	b.WriteByte('$')
	encodeCrypt64(&b, sum)
	return b.String(), nil
}

// CheckPassword reports whether password matches hash, a SHA-512 crypt hash
// such as one from [HashPassword]. It compares in constant time and is
// false for a hash of another method.
func CheckPassword(hash, password string) bool {
	got, err := CryptSHA512(password, hash)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(hash)) == 1
}

// sha512Crypt is steps 1 to 21 of the specification: the digest of
// password and salt after the given number of rounds.
func sha512Crypt(pw, salt []byte, rounds int) [sha512.Size]byte {
	// Digest B: password, salt, password.
	h := sha512.New()
	h.Write(pw)
	h.Write(salt)
	h.Write(pw)
	var db [sha512.Size]byte
	h.Sum(db[:0])

	// Digest A: password, salt, then len(pw) bytes of B, then for each bit of
	// len(pw) from the lowest, B for a one and the password for a zero.
	h.Reset()
	h.Write(pw)
	h.Write(salt)
	n := len(pw)
	for ; n > sha512.Size; n -= sha512.Size {
		h.Write(db[:])
	}
	h.Write(db[:n])
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write(db[:])
		} else {
			h.Write(pw)
		}
	}
	var da [sha512.Size]byte
	h.Sum(da[:0])

	// Digest DP: the password len(pw) times; P is its first len(pw) bytes,
	// repeated.
	h.Reset()
	for range len(pw) {
		h.Write(pw)
	}
	var dp [sha512.Size]byte
	h.Sum(dp[:0])
	p := repeatTo(dp[:], len(pw))

	// Digest DS: the salt 16+A[0] times; S is its first len(salt) bytes.
	h.Reset()
	for range 16 + int(da[0]) {
		h.Write(salt)
	}
	var ds [sha512.Size]byte
	h.Sum(ds[:0])
	s := repeatTo(ds[:], len(salt))

	// The rounds.
	c := da
	for i := range rounds {
		h.Reset()
		if i&1 != 0 {
			h.Write(p)
		} else {
			h.Write(c[:])
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i&1 != 0 {
			h.Write(c[:])
		} else {
			h.Write(p)
		}
		h.Sum(c[:0])
	}
	return c
}

// repeatTo returns n bytes made of d repeated.
func repeatTo(d []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, d[:min(len(d), n-len(out))]...)
	}
	return out
}

// cryptOrder is the byte order of the SHA-512 crypt output: groups of three
// bytes, each encoded as four characters; the last byte alone as two.
var cryptOrder = [...][3]int{
	{0, 21, 42}, {22, 43, 1}, {44, 2, 23}, {3, 24, 45}, {25, 46, 4}, {47, 5, 26},
	{6, 27, 48}, {28, 49, 7}, {50, 8, 29}, {9, 30, 51}, {31, 52, 10}, {53, 11, 32},
	{12, 33, 54}, {34, 55, 13}, {56, 14, 35}, {15, 36, 57}, {37, 58, 16}, {59, 17, 38},
	{18, 39, 60}, {40, 61, 19}, {62, 20, 41},
}

// encodeCrypt64 writes the 86-character encoding of a SHA-512 crypt digest.
func encodeCrypt64(b *strings.Builder, d [sha512.Size]byte) {
	put := func(w uint32, n int) {
		for range n {
			b.WriteByte(cryptAlphabet[w&0x3f])
			w >>= 6
		}
	}
	for _, g := range cryptOrder {
		put(uint32(d[g[0]])<<16|uint32(d[g[1]])<<8|uint32(d[g[2]]), 4)
	}
	put(uint32(d[63]), 2)
}
