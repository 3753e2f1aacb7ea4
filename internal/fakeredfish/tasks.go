package fakeredfish

import (
	"fmt"
	"net/http"
	"strings"
)

// task is an asynchronous reset, or PATCH of the boot override: polls
// left, then done.
type task struct {
	id    string
	reset string
	patch *bootOverride
	left  int
	state string // Running, Completed, Exception
	msg   string
}

// tasksURI is the TaskService's collection of tasks.
const tasksURI = "/redfish/v1/TaskService/Tasks"

// monitor answers a GET of a task monitor (<task>/Monitor) or of the
// task: 202 while it runs, then the reset (or the PATCH) is applied and 200 with the
// Task, Completed (or Exception).
func (s *Server) monitor(w http.ResponseWriter, r *http.Request, rest string) {
	id, sub, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	tk := s.tasks[id]
	s.mu.Unlock()
	if tk == nil || (sub != "" && sub != "Monitor") {
		s.fail(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", r.URL.Path))
		return
	}
	s.mu.Lock()
	if tk.state == "Running" && tk.left > 0 {
		tk.left--
		body := taskBody(tk)
		s.mu.Unlock()
		w.Header().Set("Location", tasksURI+"/"+tk.id+"/Monitor")
		s.json(w, http.StatusAccepted, body)
		return
	}
	run := tk.state == "Running"
	s.mu.Unlock()
	if run {
		state, msg := "Completed", ""
		switch {
		case s.cfg.TaskFails != "":
			state, msg = "Exception", s.cfg.TaskFails
		case tk.patch != nil:
			s.mu.Lock()
			s.override = *tk.patch
			s.etag++
			s.mu.Unlock()
		default:
			ctx := r.Context()
			on, err := s.cfg.Hook.Power(ctx)
			if err == nil {
				err = s.apply(ctx, tk.reset, on)
			}
			if err != nil {
				state, msg = "Exception", err.Error()
			}
		}
		s.mu.Lock()
		tk.state, tk.msg = state, msg
		s.mu.Unlock()
	}
	s.mu.Lock()
	body := taskBody(tk)
	s.mu.Unlock()
	s.json(w, http.StatusOK, body)
}

// taskBody is a Task resource.
func taskBody(tk *task) map[string]any {
	name := "Reset " + tk.reset
	if tk.patch != nil {
		name = "Set the boot override"
	}
	b := map[string]any{"@odata.id": tasksURI + "/" + tk.id, "@odata.type": "#Task.v1_4_3.Task", "Id": tk.id, "Name": name,
		"TaskState": tk.state, "TaskMonitor": tasksURI + "/" + tk.id + "/Monitor"}
	if tk.msg != "" {
		b["Messages"] = []map[string]string{{"MessageId": "Base.1.0.InternalError", "Message": tk.msg}}
	}
	return b
}
