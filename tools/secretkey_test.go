package tools

import (
	"math/rand"
	"testing"
)

// TestIsSecretKeyAgreesWithPattern checks the ASCII fast path against the
// expression it stands for, on the words themselves, their neighbours and
// random names built from their letters.
func TestIsSecretKeyAgreesWithPattern(t *testing.T) {
	names := []string{"", "env", "ENV", "Env", "envs", "myenv", "environment", "note", "body", "subject",
		"token", "GH_TOKEN", "access-token", "tok", "psk", "PSK_value", "Secret", "secrets", "password",
		"passwd", "pass", "apikey", "API_KEY", "api-key", "apiKey", "api key", "authorization", "Authorization",
		"auth", "credential", "credentials", "private_key", "privateKey", "PRIVATE-KEY", "private key",
		"ſecret", "\u212aey", "tö ken", "tökén"}
	letters := []byte("abceiknoprstvwyAEKNPST_- ")
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		b := make([]byte, rng.Intn(14))
		for i := range b {
			b[i] = letters[rng.Intn(len(letters))]
		}
		names = append(names, string(b))
	}
	for _, w := range secretKeyWords {
		names = append(names, w, "x"+w+"y", w[:len(w)-1])
	}
	for _, n := range names {
		if got, want := isSecretKey(n), secretKey.MatchString(n); got != want {
			t.Errorf("isSecretKey(%q) = %v, the pattern says %v", n, got, want)
		}
	}
}
