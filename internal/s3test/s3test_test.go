package s3test_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/s3test"
)

// TestServerRefusesAnonymousWrites: the gateway is up with its bucket,
// and an unsigned PUT is refused, as an S3 service with identities
// refuses it: credentials are really checked.
func TestServerRefusesAnonymousWrites(t *testing.T) {
	s := s3test.Start(t)
	req, _ := http.NewRequest("PUT", s.Endpoint+"/"+s3test.Bucket+"/x", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous PUT: %s, want 403", resp.Status)
	}
	if _, found := s.Object(t, "x"); found {
		t.Error("the anonymous PUT wrote its object")
	}
}
