package fakeovh

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Reinstalls returns the service names of the servers reinstalled so
// far, in order.
func (f *Fake) Reinstalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reinstalled...)
}

// reinstall answers POST /dedicated/server/{name}/reinstall: the body
// must name an operatingSystem; the task is done at once. Callers hold
// f.mu.
func (f *Fake) reinstall(w http.ResponseWriter, s *Server, body []byte) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(body, &p); err != nil {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "Invalid body")
		return
	}
	var osName string
	if err := json.Unmarshal(p["operatingSystem"], &osName); err != nil || osName == "" {
		fail(w, http.StatusBadRequest, "Client::BadRequest", "[operatingSystem] Property is mandatory")
		return
	}
	s.OS = osName
	f.reinstalled = append(f.reinstalled, s.Name)
	f.nextID++
	t := &task{id: f.nextID, function: "reinstallServer"}
	f.tasks[t.id] = t
	reply(w, taskView(t, "init"))
}

func taskView(t *task, status string) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	return map[string]any{"taskId": t.id, "function": t.function, "status": status, "comment": "",
		"startDate": now, "doneDate": now, "lastUpdate": now, "needSchedule": false, "plannedInterventionId": nil, "tags": nil}
}

// task answers GET /dedicated/server/{name}/task/{id}: done.
func (f *Fake) task(w http.ResponseWriter, s *Server, id string) {
	n, _ := strconv.ParseInt(id, 10, 64)
	t, ok := f.tasks[n]
	if !ok {
		fail(w, http.StatusNotFound, "Client::NotFound", "The requested object (taskId = %s) does not exist", id)
		return
	}
	reply(w, taskView(t, "done"))
}

// terminate answers POST /dedicated/server/{name}/terminate: the
// account receives the email whose link carries the confirmation token,
// as the API sends it.
func (f *Fake) terminate(w http.ResponseWriter, s *Server) {
	f.nextID++
	token := fmt.Sprintf("tok%d", f.nextID)
	f.tokens[s.Name] = token
	f.emails = append(f.emails, email{id: f.nextID, subject: "Termination of " + s.Name,
		body: fmt.Sprintf("To confirm the termination of %s, follow https://www.ovh.com/manager/#/billing/confirmTerminate?id=%s&token=%s now.", s.Name, "abc123", token)})
	reply(w, "termination requested")
}

// confirmTermination answers POST /dedicated/server/{name}/
// confirmTermination: with the emailed token the server is gone.
func (f *Fake) confirmTermination(w http.ResponseWriter, s *Server, body []byte) {
	var p struct {
		Token      string  `json:"token"`
		Reason     *string `json:"reason"`
		Commentary *string `json:"commentary"`
		FutureUse  *string `json:"futureUse"`
	}
	if !decodeStrict(w, body, &p) {
		return
	}
	if p.Token == "" || p.Token != f.tokens[s.Name] {
		fail(w, http.StatusForbidden, "Client::Forbidden", "Invalid token")
		return
	}
	delete(f.tokens, s.Name)
	delete(f.servers, s.Name)
	delete(f.services, s.serviceID)
	reply(w, "terminated")
}
