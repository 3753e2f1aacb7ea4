package fakeovh

import (
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credentials of the one application the fake knows. Tests pass them to
// the plugin through OVH_APPLICATION_KEY, OVH_APPLICATION_SECRET and
// OVH_CONSUMER_KEY, never in a file.
type Credentials struct {
	// AppKey, AppSecret and ConsumerKey are the application key, its
	// secret and the consumer key the plugin signs with.
	AppKey, AppSecret, ConsumerKey string
}

// Fake is a running fake API. Its methods are safe for concurrent use.
type Fake struct {
	srv   *httptest.Server
	creds Credentials

	mu          sync.Mutex
	servers     map[string]*Server
	services    map[int64]string // serviceId → service name
	carts       map[string]*cart
	orders      map[int64]*order
	emails      []email
	tasks       map[int64]*task
	tokens      map[string]string // service name → termination token
	reinstalled []string
	nextID      int64
	calls       []string
}

// Start starts a fake on a loopback port that accepts only requests
// signed with creds. Close it when done.
func Start(creds Credentials) *Fake {
	f := &Fake{creds: creds, servers: map[string]*Server{}, services: map[int64]string{}, carts: map[string]*cart{},
		orders: map[int64]*order{}, tasks: map[int64]*task{}, tokens: map[string]string{}, nextID: 100000,
		// An account's email history is never empty; the plugin's
		// termination reads its last id and fails on an empty one.
		emails: []email{{id: 100000, subject: "Welcome to OVHcloud", body: "Your account xx1234-ovh is ready."}}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// Endpoint is the API base URL to give the plugin (the provider block's
// endpoint, platform.yaml's infrastructure.api.uri), ending in /1.0.
func (f *Fake) Endpoint() string { return f.srv.URL + "/1.0" }

// Close stops the fake.
func (f *Fake) Close() { f.srv.Close() }

// Calls returns the calls made so far, as "METHOD /path" without the
// /1.0 prefix and the query.
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// apiError is the real API's error body.
type apiError struct {
	Class   string `json:"class,omitempty"`
	Message string `json:"message"`
}

// fail writes the API's error shape with code.
func fail(w http.ResponseWriter, code int, class, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(apiError{Class: class, Message: fmt.Sprintf(format, args...)})
}

// reply writes v as JSON with status 200.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// serve records the call, checks its signature and routes it.
func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "cannot read the request body")
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, "/1.0")
	if !ok {
		fail(w, http.StatusNotFound, "Client::NotFound", "Got an invalid (or empty) URL")
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+path)
	f.mu.Unlock()
	if r.Method == http.MethodGet && path == "/auth/time" {
		reply(w, time.Now().Unix())
		return
	}
	if !f.authorized(w, r, body) {
		return
	}
	f.route(w, r, path, body)
}

// authorized checks the application key, consumer key, timestamp and
// X-Ovh-Signature of r as the real API does ("$1$" + SHA-1 of secret,
// consumer key, method, full URL, body and timestamp joined by '+'),
// answering its errors when they do not hold.
func (f *Fake) authorized(w http.ResponseWriter, r *http.Request, body []byte) bool {
	app, ck := r.Header.Get("X-Ovh-Application"), r.Header.Get("X-Ovh-Consumer")
	switch {
	case app == "":
		fail(w, http.StatusUnauthorized, "Client::Unauthorized", "You must login first")
		return false
	case app != f.creds.AppKey:
		fail(w, http.StatusForbidden, "Client::Forbidden", "This application key is invalid")
		return false
	case ck != f.creds.ConsumerKey:
		fail(w, http.StatusForbidden, "Client::Forbidden", "This credential does not exist")
		return false
	}
	ts, err := strconv.ParseInt(r.Header.Get("X-Ovh-Timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 3*time.Minute {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "Query out of time")
		return false
	}
	target := "http://" + r.Host + r.URL.RequestURI()
	sum := sha1.Sum([]byte(fmt.Sprintf("%s+%s+%s+%s+%s+%d", f.creds.AppSecret, ck, r.Method, target, body, ts)))
	if r.Header.Get("X-Ovh-Signature") != fmt.Sprintf("$1$%x", sum) {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "Invalid signature")
		return false
	}
	return true
}

// route answers an authenticated call.
func (f *Fake) route(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	switch {
	case r.Method == http.MethodGet && path == "/auth/details":
		reply(w, map[string]any{"account": "xx1234-ovh", "method": "account", "user": "", "roles": []string{},
			"identities": []string{"urn:v1:eu:identity:account:xx1234-ovh"}, "allowedRoutes": []any{}, "description": ""})
	case r.Method == http.MethodGet && path == "/me":
		reply(w, map[string]any{"nichandle": "xx1234-ovh", "ovhSubsidiary": "FR", "country": "FR", "currency": map[string]any{"code": "EUR", "symbol": "€"}})
	case r.Method == http.MethodPut && strings.HasPrefix(path, "/services/"):
		f.putService(w, strings.TrimPrefix(path, "/services/"), body)
	case path == "/dedicated/server":
		if r.Method != http.MethodGet {
			fail(w, http.StatusMethodNotAllowed, "Client::MethodNotAllowed", "Method not allowed")
			return
		}
		reply(w, f.names())
	case strings.HasPrefix(path, "/dedicated/server/"):
		f.dedicated(w, r, strings.TrimPrefix(path, "/dedicated/server/"), body)
	default:
		if !f.orderRoute(w, r, path, body) {
			fail(w, http.StatusNotFound, "Client::NotFound", "Got an invalid (or empty) URL")
		}
	}
}

// decodeStrict decodes body into v, refusing unknown properties as the
// API does.
func decodeStrict(w http.ResponseWriter, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "Client::BadRequest::InvalidProperty", "Invalid body: %v", err)
		return false
	}
	return true
}
