package fakeovh

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// PlanCodes are the dedicated server plan codes the fake sells.
var PlanCodes = []string{"24adv01", "24rise01"}

// cart is an order cart; item one server in it.
type cart struct {
	subsidiary string
	items      []*item
}

type item struct {
	id       int64
	cartID   string
	planCode string
	configs  map[string]string
}

// order is a checked-out cart: delivered at once, each detail a server.
type order struct {
	details []detail
}

type detail struct {
	id       int64
	planCode string
	domain   string
}

// email is a notification email of the account's history.
type email struct {
	id            int64
	subject, body string
}

// task is a dedicated server task (a reinstall), done at once.
type task struct {
	id       int64
	function string
}

// orderRoute answers /order/cart... and /me/order...; ok is false for
// a path of neither.
func (f *Fake) orderRoute(w http.ResponseWriter, r *http.Request, path string, body []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && path == "/order/cart":
		f.newCart(w, body)
	case len(parts) >= 3 && parts[0] == "order" && parts[1] == "cart":
		f.cartCall(w, r, parts[2], parts[3:], body)
	case r.Method == http.MethodGet && path == "/me/payment/method":
		reply(w, []int64{4242})
	case len(parts) >= 3 && parts[0] == "me" && parts[1] == "order":
		f.meOrder(w, r, parts[2:])
	case r.Method == http.MethodGet && path == "/me/notification/email/history":
		ids := make([]int64, 0, len(f.emails))
		for _, e := range f.emails {
			ids = append(ids, e.id)
		}
		reply(w, ids)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/me/notification/email/history/"):
		id, _ := strconv.ParseInt(parts[len(parts)-1], 10, 64)
		for _, e := range f.emails {
			if e.id == id {
				reply(w, map[string]any{"id": e.id, "subject": e.subject, "body": e.body, "date": time.Now().Format(time.RFC3339)})
				return true
			}
		}
		fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (id = %d) does not exist", id)
	default:
		return false
	}
	return true
}

func (f *Fake) newCart(w http.ResponseWriter, body []byte) {
	var p struct {
		OvhSubsidiary string  `json:"ovhSubsidiary"`
		Description   *string `json:"description"`
		Expire        *string `json:"expire"`
	}
	if !decodeStrict(w, body, &p) {
		return
	}
	if p.OvhSubsidiary == "" {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "[ovhSubsidiary] Property is mandatory")
		return
	}
	f.nextID++
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", f.nextID, f.nextID)
	f.carts[id] = &cart{subsidiary: p.OvhSubsidiary}
	reply(w, map[string]any{"cartId": id, "description": nil, "expire": nil, "items": []int64{}, "readOnly": false})
}

// cartCall answers /order/cart/{cartId}/...: assign, an item of the
// baremetalServers product, an item's configuration, checkout.
func (f *Fake) cartCall(w http.ResponseWriter, r *http.Request, id string, rest []string, body []byte) {
	c, ok := f.carts[id]
	if !ok {
		fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (cartId = %s) does not exist", id)
		return
	}
	switch {
	case r.Method == http.MethodPost && len(rest) == 1 && rest[0] == "assign":
		reply(w, nil)
	case r.Method == http.MethodPost && len(rest) == 1 && (rest[0] == "baremetalServers" || rest[0] == "eco"):
		f.addItem(w, c, id, body)
	case r.Method == http.MethodPost && len(rest) == 3 && rest[0] == "item" && rest[2] == "configuration":
		f.configure(w, c, rest[1], body)
	case len(rest) == 1 && rest[0] == "checkout":
		f.checkout(w, r, c, id)
	default:
		fail(w, http.StatusNotFound, "Client::NotFound", "Got an invalid (or empty) URL")
	}
}

func (f *Fake) addItem(w http.ResponseWriter, c *cart, cartID string, body []byte) {
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "Invalid body")
		return
	}
	for _, k := range []string{"planCode", "duration", "pricingMode", "quantity"} {
		if p[k] == nil || p[k] == "" {
			fail(w, http.StatusBadRequest, "Client::BadRequest", "[%s] Property is mandatory", k)
			return
		}
	}
	code, _ := p["planCode"].(string)
	known := false
	for _, pc := range PlanCodes {
		known = known || pc == code
	}
	if !known {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "Offer %s not found", code)
		return
	}
	f.nextID++
	it := &item{id: f.nextID, cartID: cartID, planCode: code, configs: map[string]string{}}
	c.items = append(c.items, it)
	reply(w, map[string]any{"cartId": cartID, "itemId": it.id, "configurations": []int64{}, "duration": p["duration"],
		"offerId": nil, "options": []int64{}, "parentItemId": nil, "productId": "baremetalServers", "settings": map[string]any{"planCode": code}})
}

func (f *Fake) configure(w http.ResponseWriter, c *cart, itemID string, body []byte) {
	var p struct {
		Label string `json:"label"`
		Value string `json:"value"`
	}
	if !decodeStrict(w, body, &p) {
		return
	}
	for _, it := range c.items {
		if strconv.FormatInt(it.id, 10) != itemID {
			continue
		}
		if p.Label == "" || p.Value == "" {
			fail(w, http.StatusBadRequest, "Client::BadRequest", "[label] and [value] are mandatory")
			return
		}
		it.configs[p.Label] = p.Value
		f.nextID++
		reply(w, map[string]any{"id": f.nextID, "label": p.Label, "value": p.Value})
		return
	}
	fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (itemId = %s) does not exist", itemID)
}

// checkout answers GET (the price) and POST (the order) of a cart. An
// item without its dedicated_datacenter or dedicated_os configuration is
// refused, as the API does.
func (f *Fake) checkout(w http.ResponseWriter, r *http.Request, c *cart, cartID string) {
	for _, it := range c.items {
		for _, need := range []string{"dedicated_datacenter", "dedicated_os"} {
			if it.configs[need] == "" {
				fail(w, http.StatusBadRequest, "Client::BadRequest", "Missing configuration %s for item %d", need, it.id)
				return
			}
		}
	}
	prices := map[string]any{"withoutTax": map[string]any{"value": 100.0, "currencyCode": "EUR", "text": "100.00 €"}}
	if r.Method == http.MethodGet {
		reply(w, map[string]any{"orderId": nil, "prices": prices})
		return
	}
	f.nextID++
	orderID := f.nextID
	o := &order{}
	for _, it := range c.items {
		f.nextID++
		s := f.deliver(it)
		o.details = append(o.details, detail{id: f.nextID, planCode: it.planCode, domain: s.Name})
	}
	f.orders[orderID] = o
	delete(f.carts, cartID)
	reply(w, map[string]any{"orderId": orderID, "prices": prices, "url": "https://example.invalid/order"})
}

// deliver makes the server an item orders, with a service name of the
// cloud's form; callers hold f.mu.
func (f *Fake) deliver(it *item) *Server {
	f.nextID++
	n := f.nextID
	s := &Server{Name: fmt.Sprintf("ns%d.ip-147-135-%d.net", 5000000+n, n%250), IP: fmt.Sprintf("147.135.%d.%d", n%250, n%200+1),
		Datacenter: it.configs["dedicated_datacenter"] + "1", Region: "ca-east-bhs", CommercialRange: "advance",
		PublicMAC: fmt.Sprintf("aa:bb:cc:%02x:%02x:01", n/256%256, n%256), PrivateMAC: fmt.Sprintf("aa:bb:cc:%02x:%02x:02", n/256%256, n%256),
		DiskType: "NVME", Disks: 2, serverID: n, serviceID: n + 500000}
	s.DisplayName = s.Name
	f.servers[s.Name] = s
	f.services[s.serviceID] = s.Name
	return s
}

// meOrder answers /me/order/{orderId}/...: pay, status, details, a
// detail and its extension.
func (f *Fake) meOrder(w http.ResponseWriter, r *http.Request, rest []string) {
	id, _ := strconv.ParseInt(rest[0], 10, 64)
	o, ok := f.orders[id]
	if !ok {
		fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (orderId = %s) does not exist", rest[0])
		return
	}
	sub := strings.Join(rest[1:], "/")
	switch {
	case r.Method == http.MethodPost && sub == "pay":
		reply(w, nil)
	case r.Method == http.MethodGet && sub == "status":
		reply(w, "delivered")
	case r.Method == http.MethodGet && sub == "details":
		ids := []int64{}
		for _, d := range o.details {
			ids = append(ids, d.id)
		}
		reply(w, ids)
	case r.Method == http.MethodGet && len(rest) >= 3 && rest[1] == "details":
		for _, d := range o.details {
			if strconv.FormatInt(d.id, 10) != rest[2] {
				continue
			}
			if len(rest) == 4 && rest[3] == "extension" {
				reply(w, map[string]any{"order": map[string]any{"plan": map[string]any{"code": d.planCode}, "configurations": []any{}}})
			} else {
				reply(w, map[string]any{"orderDetailId": d.id, "domain": d.domain, "description": "dedicated server", "quantity": "1"})
			}
			return
		}
		fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (orderDetailId = %s) does not exist", rest[2])
	default:
		fail(w, http.StatusNotFound, "Client::NotFound", "Got an invalid (or empty) URL")
	}
}
