package answerclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/plasmactl/plasma-node/answer"
)

// Accept is the header proxmox-fetch-answer sends from 9.2: JSON first,
// TOML as the fallback.
const Accept = "application/json, application/toml;q=0.5"

// Reply is an answer as an installer of a release took it.
type Reply struct {
	// Answer is the answer decoded and validated by the release's rules.
	Answer *answer.Answer
	// JSON is whether the reply was read as JSON: a 9.2+ installer reads
	// a reply whose Content-Type starts with application/json so.
	JSON bool
	// ContentType is the reply's Content-Type.
	ContentType string
	// Raw is the reply's body.
	Raw []byte
}

// StatusError is a reply the installer does not take: from 9.2 any
// status but 200 and 201, before it any status of 400 and up.
type StatusError struct {
	// Status is the HTTP status; Body the reply's body, trimmed.
	Status int
	Body   string
}

func (e *StatusError) Error() string { return fmt.Sprintf("status=%d body=%q", e.Status, e.Body) }

// Fetch POSTs the system info body to url as installer v does, with the
// bearer token when not empty (9.2+ ISOs prepared with one), and reads the
// reply as v does: from 9.2 it sends [Accept] and reads a reply whose
// Content-Type starts with application/json as JSON, anything else as
// TOML; before 9.2 it sends no Accept and reads every reply as TOML.
func Fetch(ctx context.Context, c *http.Client, url string, v answer.Version, body []byte, token string) (*Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if v.TakesJSON() {
		req.Header.Set("Accept", Accept)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 10<<20))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	ok := resp.StatusCode < 400
	if v.TakesJSON() {
		ok = resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated
	}
	if !ok {
		return nil, &StatusError{Status: resp.StatusCode, Body: strings.TrimSpace(string(raw))}
	}
	r := &Reply{ContentType: resp.Header.Get("Content-Type"), Raw: raw}
	r.JSON = v.TakesJSON() && strings.HasPrefix(r.ContentType, "application/json")
	if r.JSON {
		r.Answer, err = answer.DecodeJSON(raw, v)
	} else {
		r.Answer, err = answer.Decode(raw, v)
	}
	if err != nil {
		return nil, fmt.Errorf("answer refused by the %s parser: %w", v, err)
	}
	return r, nil
}
