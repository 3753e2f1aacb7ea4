package answer_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/answer"
)

func TestCryptSHA512MatchesTheSpecificationsVectors(t *testing.T) {
	// The SHA-512 test vectors of Ulrich Drepper's "Unix crypt using SHA-256
	// and SHA-512", in the order of the specification.
	tests := map[string]struct{ setting, password, want string }{
		"default rounds": {
			"$6$saltstring", "Hello world!",
			"$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1",
		},
		"10000 rounds and a salt cut to 16 characters": {
			"$6$rounds=10000$saltstringsaltstring", "Hello world!",
			"$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.",
		},
		"explicit 5000 rounds are kept in the output": {
			"$6$rounds=5000$toolongsaltstring", "This is just a test",
			"$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0",
		},
		"a password longer than a digest": {
			"$6$rounds=1400$anotherlongsaltstring", "a very much longer text to encrypt.  This one even stretches over morethan one line.",
			"$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1",
		},
		"a short salt": {
			"$6$rounds=77777$short", "we have a short salt string but not a short password",
			"$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0",
		},
		"123456 rounds": {
			"$6$rounds=123456$asaltof16chars..", "a short string",
			"$6$rounds=123456$asaltof16chars..$BtCwjqMJGx5hrJhZywWvt0RLE8uZ4oPwcelCjmw2kSYu.Ec6ycULevoBK25fs2xXgMNrCzIMVcgEJAstJeonj1",
		},
		"too few rounds are raised to 1000": {
			"$6$rounds=10$roundstoolow", "the minimum number is still observed",
			"$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX.",
		},
		// Not in the specification; the value glibc's crypt(3) returns.
		"an empty password, as glibc computes it": {
			"$6$a", "",
			"$6$a$Z6IPkDduHdwavesVY2NFMpOHkigshxPYdhfLg0D3A7/XFQcso9RV2E8qczyJ2su.dj6RRLaTpvgwN1rZfK0I9.",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := answer.CryptSHA512(tc.password, tc.setting)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("CryptSHA512(%q, %q)\n got %s\nwant %s", tc.password, tc.setting, got, tc.want)
			}
			if !answer.CheckPassword(tc.want, tc.password) {
				t.Errorf("CheckPassword(vector) = false")
			}
			if answer.CheckPassword(tc.want, tc.password+"x") {
				t.Errorf("CheckPassword(vector, wrong password) = true")
			}
		})
	}
}

// hashRe is a default-rounds SHA-512 crypt hash with a 16-character salt.
var hashRe = regexp.MustCompile(`^\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$`)

func TestHashPassword(t *testing.T) {
	a, err := answer.HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	b, err := answer.HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{a, b} {
		if !hashRe.MatchString(h) {
			t.Errorf("HashPassword = %q, want $6$<16 salt chars>$<86 chars>", h)
		}
		if !answer.CheckPassword(h, "correct horse battery staple") || answer.CheckPassword(h, "correct horse battery") {
			t.Errorf("CheckPassword does not accept exactly the hashed password for %s", h)
		}
	}
	if a == b {
		t.Errorf("two hashes of one password share a salt: %s", a)
	}
	// The hash is what the answer takes.
	ans := bootDiskAnswer()
	ans.Global.RootPassword, ans.Global.RootPasswordHashed = "", a
	if err := answer.Validate(ans, answer.Version92); err != nil {
		t.Errorf("Validate of an answer with the hash: %v", err)
	}
}

func TestCryptSHA512RefusesBadInput(t *testing.T) {
	tests := map[string]struct{ password, setting string }{
		"another method":              {"pw", "$5$salt"},
		"no method":                   {"pw", "nomethod"},
		"rounds that are not numbers": {"pw", "$6$rounds=many$salt"},
		"rounds without a salt":       {"pw", "$6$rounds=5000"},
		"a salt with a colon":         {"pw", "$6$sa:lt"},
		"a salt with a newline":       {"pw", "$6$sa\nlt"},
		"a password with a NUL byte":  {"p\x00w", "$6$salt"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := answer.CryptSHA512(tc.password, tc.setting)
			if !errors.Is(err, answer.ErrInvalid) {
				t.Fatalf("CryptSHA512 error = %v, want ErrInvalid", err)
			}
			if strings.Contains(err.Error(), tc.setting) {
				t.Errorf("error %q quotes the setting", err)
			}
			if answer.CheckPassword(tc.setting, tc.password) {
				t.Errorf("CheckPassword accepted a bad hash")
			}
		})
	}
	if _, err := answer.HashPassword("p\x00w"); !errors.Is(err, answer.ErrInvalid) {
		t.Errorf("HashPassword with NUL: error = %v, want ErrInvalid", err)
	}
}

// TestCryptSHA512MatchesOpenSSL compares with another implementation over
// password and salt lengths around the digest size (64 bytes).
func TestCryptSHA512MatchesOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("PLASMA_E2E") == "1" {
			t.Fatal("openssl not found")
		}
		t.Skip("openssl not found: cross-check skipped")
	}
	for _, pwLen := range []int{1, 7, 63, 64, 65, 127, 128, 129, 200} {
		for _, salt := range []string{"a", "0123456789abcde", "0123456789abcdef", "./AZaz09"} {
			pw := strings.Repeat("pässwörd", pwLen/8+1)[:pwLen]
			t.Run(fmt.Sprintf("password of %d bytes, salt %q", pwLen, salt), func(t *testing.T) {
				out, err := exec.Command(openssl, "passwd", "-6", "-salt", salt, pw).Output()
				if err != nil {
					if os.Getenv("PLASMA_E2E") == "1" {
						t.Fatalf("openssl passwd -6 failed: %v", err)
					}
					t.Skipf("openssl passwd -6 failed: %v", err)
				}
				want := strings.TrimSpace(string(out))
				got, err := answer.CryptSHA512(pw, "$6$"+salt)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("CryptSHA512 = %s, openssl = %s", got, want)
				}
			})
		}
	}
}

func BenchmarkHashPassword(b *testing.B) {
	for b.Loop() {
		if _, err := answer.HashPassword("correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleHashPassword() {
	hash, err := answer.HashPassword("generated-password")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hash[:3], len(hash), answer.CheckPassword(hash, "generated-password"))
	// Output: $6$ 106 true
}
