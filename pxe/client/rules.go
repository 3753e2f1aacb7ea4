package client

import (
	"context"
	"net/url"

	"github.com/plasmactl/plasma-node/pxe/enrol"
)

// Rules returns the enrolment rules by priority and their counters
// (admin).
func (c *Client) Rules(ctx context.Context) (enrol.State, error) {
	var out enrol.State
	err := c.do(ctx, request{method: "GET", path: "/rules", op: opRule, retry: true}, &out)
	return out, err
}

// AddRule adds r, or replaces the rule of its name with replace
// (admin). Refusals match enrol.ErrInvalidRule, enrol.ErrPriorityTaken
// and enrol.ErrExists, as the local ones do.
func (c *Client) AddRule(ctx context.Context, r enrol.Rule, replace bool) (enrol.State, error) {
	path := "/rules"
	if replace {
		path += "?replace=true"
	}
	var out enrol.State
	err := c.do(ctx, request{method: "POST", path: path, body: r, op: opRule}, &out)
	return out, err
}

// ApplyRules makes rules the whole set (admin).
func (c *Client) ApplyRules(ctx context.Context, rules []enrol.Rule) (enrol.State, error) {
	var out enrol.State
	err := c.do(ctx, request{method: "PUT", path: "/rules", body: struct {
		Rules []enrol.Rule `json:"rules"`
	}{append([]enrol.Rule{}, rules...)}, op: opRule, retry: true}, &out)
	return out, err
}

// RemoveRule removes the rule name (admin); none of that name matches
// enrol.ErrNotFound.
func (c *Client) RemoveRule(ctx context.Context, name string) error {
	return c.do(ctx, request{method: "DELETE", path: "/rules/" + url.PathEscape(name), op: opRule, retry: true}, nil)
}

// PreviewRules returns, for each machine of the inbox, what the rules
// would make of it (admin).
func (c *Client) PreviewRules(ctx context.Context) ([]enrol.Decision, error) {
	var out []enrol.Decision
	err := c.do(ctx, request{method: "GET", path: "/rules/preview", op: opRule, retry: true}, &out)
	return out, err
}
