package models

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/bcrypt"
)

// Sealer encrypts secrets that FreeSWITCH must see in clear (SIP secrets,
// trunk passwords, PINs) with the server key, so a database dump alone does
// not reveal them.
type Sealer struct {
	aead cipher.AEAD
	// derive keys subkeys (Derive); never the sealing key itself.
	derive []byte
}

// NewSealer builds a sealer from a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("switchboard subkeys"))
	return &Sealer{aead: aead, derive: mac.Sum(nil)}, nil
}

// Derive is a 32-byte key for one purpose (e.g. signing media URLs), taken
// from the server key, so each use has its own key and a leaked subkey
// says nothing about sealed secrets.
func (s *Sealer) Derive(purpose string) []byte {
	mac := hmac.New(sha256.New, s.derive)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

const sealPrefix = "v1:"

// Seal encrypts plain.
func (s *Sealer) Seal(plain string) string {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the OS has no entropy: nothing sensible to do
	}
	out := s.aead.Seal(nonce, nonce, []byte(plain), nil)
	return sealPrefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value made by Seal.
func (s *Sealer) Open(sealed string) (string, error) {
	if !strings.HasPrefix(sealed, sealPrefix) {
		return "", errors.New("open secret: unknown format")
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[len(sealPrefix):])
	if err != nil || len(raw) < s.aead.NonceSize() {
		return "", errors.New("open secret: corrupt value")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", errors.New("open secret: wrong server key or corrupt value")
	}
	return string(plain), nil
}

const secretAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

func randomString(alphabet string, n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err))
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// randomSecret24 generates a SIP secret (24 random characters).
func randomSecret24() string { return randomString(secretAlphabet, 24) }

// randomPIN generates a six-digit PIN.
func randomPIN() string { return randomString("0123456789", 6) }

// NewAPIKeyValue returns a new API key: a fixed prefix, so leaked keys are
// easy to find, and 32 random bytes.
func NewAPIKeyValue() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return "sb_" + base64.RawURLEncoding.EncodeToString(b)
}

// HashKey is how API key values are stored: SHA-256, hex. Keys carry 256
// bits of entropy, so a fast hash is enough and keeps lookups cheap.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// passwordCost is bcrypt's work factor for new hashes: bcrypt.DefaultCost
// except in test processes that lower it (SetTestPasswordCost).
var passwordCost atomic.Int64

func init() { passwordCost.Store(int64(bcrypt.DefaultCost)) }

// SetTestPasswordCost makes HashPassword use bcrypt's minimum cost for the
// rest of the process. Only test helpers call it: the HTTP tests hash and
// check hundreds of passwords, each costing most of a second at the real
// cost under the race detector. What is tested (hashed at rest, compared
// in constant time, limits acting before a check) holds at any cost.
func SetTestPasswordCost() { passwordCost.Store(int64(bcrypt.MinCost)) }

// HashPassword stores a password with bcrypt.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), int(passwordCost.Load()))
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword compares a password with its bcrypt hash in constant time.
func CheckPassword(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// mask shows a sealed secret the way reads may: a Map secret keeps its keys
// with each value cut to "****" plus its last four characters (nothing of
// values under eight characters), a string secret becomes that mask alone.
// A value that cannot be opened shows as "****" rather than failing the read.
func (s *Store) mask(sealed any) any {
	plain, err := s.sealer.Open(asString(sealed))
	if err != nil {
		return "****"
	}
	var m map[string]any
	if json.Unmarshal([]byte(plain), &m) != nil {
		return maskValue(plain)
	}
	for k, v := range m {
		m[k] = maskValue(fmt.Sprint(v))
	}
	return m
}

func maskValue(v string) string {
	r := []rune(v)
	if len(r) < 8 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}
