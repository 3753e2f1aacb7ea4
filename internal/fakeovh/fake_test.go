package fakeovh

import (
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var creds = Credentials{AppKey: "ak", AppSecret: "as", ConsumerKey: "ck"}

// call sends a request signed as go-ovh signs it, with secret as the
// application secret, and returns the status and the decoded body.
func call(t *testing.T, f *Fake, method, path, body, secret string) (int, map[string]any) {
	t.Helper()
	target := f.Endpoint() + path
	req, err := http.NewRequest(method, target, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Unix()
	sum := sha1.Sum([]byte(fmt.Sprintf("%s+%s+%s+%s+%s+%d", secret, creds.ConsumerKey, method, target, body, ts)))
	req.Header.Set("X-Ovh-Application", creds.AppKey)
	req.Header.Set("X-Ovh-Consumer", creds.ConsumerKey)
	req.Header.Set("X-Ovh-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Ovh-Signature", fmt.Sprintf("$1$%x", sum))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func TestFakeRefusesAsTheAPIDoes(t *testing.T) {
	f := Start(creds)
	defer f.Close()
	s := f.AddServer(Server{Name: "ns1.ip-1-2-3.net", DisplayName: "a", DiskType: "SSD", Disks: 1})
	tests := map[string]struct {
		method, path, body, secret string
		code                       int
		class, message             string
	}{
		"a signed read of a server": {method: "GET", path: "/dedicated/server/" + s.Name, secret: "as", code: 200},
		"a bad signature":           {method: "GET", path: "/dedicated/server/" + s.Name, secret: "wrong", code: 400, class: "Client::BadRequest", message: "Invalid signature"},
		"an unknown server": {method: "GET", path: "/dedicated/server/ns9.ip-1-2-3.net", secret: "as", code: 404,
			class: "Client::NotFound", message: "The requested object (serviceName = ns9.ip-1-2-3.net) does not exist"},
		"an unknown property": {method: "PUT", path: "/dedicated/server/" + s.Name, body: `{"hostname":"x"}`, secret: "as", code: 400,
			class: "Client::BadRequest::InvalidProperty"},
		"a cart without a subsidiary": {method: "POST", path: "/order/cart", body: `{}`, secret: "as", code: 400, class: "Client::BadRequest",
			message: "[ovhSubsidiary] Property is mandatory"},
		"a route the API lacks": {method: "GET", path: "/dedicated/nothing", secret: "as", code: 404, class: "Client::NotFound",
			message: "Got an invalid (or empty) URL"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, body := call(t, f, tc.method, tc.path, tc.body, tc.secret)
			if code != tc.code {
				t.Fatalf("status %d (%v), want %d", code, body, tc.code)
			}
			if tc.code == 200 {
				return
			}
			got := map[string]any{"class": body["class"]}
			want := map[string]any{"class": tc.class}
			if tc.message != "" {
				got["message"], want["message"] = body["message"], tc.message
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFakeKeepsARename(t *testing.T) {
	f := Start(creds)
	defer f.Close()
	s := f.AddServer(Server{Name: "ns1.ip-1-2-3.eu", DisplayName: "a"})
	code, info := call(t, f, "GET", "/dedicated/server/"+s.Name+"/serviceInfos", "", "as")
	if code != 200 {
		t.Fatalf("serviceInfos: %d %v", code, info)
	}
	id := int64(info["serviceId"].(float64))
	if code, body := call(t, f, "PUT", fmt.Sprintf("/services/%d", id), `{"displayName":"b"}`, "as"); code != 200 {
		t.Fatalf("PUT /services/%d: %d %v", id, code, body)
	}
	_, got := call(t, f, "GET", "/dedicated/server/"+s.Name, "", "as")
	if dn := got["iam"].(map[string]any)["displayName"]; dn != "b" {
		t.Errorf("iam.displayName after the rename = %v, want b", dn)
	}
	want := []string{"GET /dedicated/server/" + s.Name + "/serviceInfos", fmt.Sprintf("PUT /services/%d", id), "GET /dedicated/server/" + s.Name}
	if diff := cmp.Diff(want, f.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
