package api

import (
	"net/http"
	"strconv"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// alerts lists alerts, newest first, with their attempts: ?job= selects a
// task's (or group member's) alerts, ?count= bounds them (default 20, at
// most MaxPage an answer), ?cursor= goes on from an answer's next.
func (s *Server) alerts(w http.ResponseWriter, r *http.Request) error {
	limit, err := pageCount(r, 20)
	if err != nil {
		return err
	}
	name := r.URL.Query().Get("job")
	if name != "" {
		if _, err := s.historyOwner(r, name); err != nil {
			return err
		}
	}
	c, hasCursor, err := readCursor(r, "alerts", "job")
	if err != nil {
		return err
	}
	st := s.sched.Store()
	as, more, err := byID(c, hasCursor, limit, func(limit int, before int64) ([]job.Alert, error) {
		return st.Alerts(r.Context(), store.AlertQuery{Task: name, Limit: limit, Before: before})
	})
	if err != nil {
		return err
	}
	resp := AlertsResponse{Alerts: []AlertView{}}
	if more {
		resp.Next = cursor{List: "alerts", Query: queryDigest(r, "job"), ID: as[len(as)-1].ID}.encode()
	}
	for _, a := range as {
		att, err := st.Attempts(r.Context(), a.ID)
		if err != nil {
			return err
		}
		a.Created, a.Start, a.End = s.local(a.Created), s.local(a.Start), s.local(a.End)
		a.NextAt, a.SentAt, a.FirstAttempt = s.local(a.NextAt), s.local(a.SentAt), s.local(a.FirstAttempt)
		for i := range att {
			att[i].At = s.local(att[i].At)
		}
		if att == nil {
			att = []job.Attempt{}
		}
		resp.Alerts = append(resp.Alerts, AlertView{Alert: a, AttemptLog: att})
	}
	return writeJSON(w, http.StatusOK, resp)
}

// audit lists audit records oldest first: ?after= a sequence number,
// ?count= bounds them (default 100, at most MaxPage an answer), ?cursor=
// goes on from an answer's next (in place of after).
func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	limit, err := pageCount(r, 100)
	if err != nil {
		return err
	}
	var after int64
	if a := r.URL.Query().Get("after"); a != "" {
		if after, err = strconv.ParseInt(a, 10, 64); err != nil || after < 0 {
			return badRequest("after must be a sequence number (a whole number of at least 0), got %q", a)
		}
	}
	c, hasCursor, err := readCursor(r, "audit")
	if err != nil {
		return err
	}
	if hasCursor {
		after = c.ID
	}
	recs, err := s.sched.Store().Audit(r.Context(), after, limit+1)
	if err != nil {
		return err
	}
	resp := AuditResponse{Records: []AuditView{}}
	if len(recs) > limit {
		recs = recs[:limit]
		resp.Next = cursor{List: "audit", Query: queryDigest(r), ID: recs[limit-1].Seq}.encode()
	}
	for _, a := range recs {
		line := a.Line(s.loc)
		a.Launch, a.Stop = s.local(a.Launch), s.local(a.Stop)
		resp.Records = append(resp.Records, AuditView{AuditRecord: a, Line: line})
	}
	return writeJSON(w, http.StatusOK, resp)
}
