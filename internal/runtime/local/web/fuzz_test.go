package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzPageQueries: no query string, path segment or period makes a page
// fail with 500 or panic; bad input is a 400 or 404 page.
func FuzzPageQueries(f *testing.F) {
	for _, s := range []string{"", "q=a&state=failed&page=2", "state=%00", "page=-1", "page=99999999999999999999", "q=%ff%fe",
		"pipeline=x&type=JOB_FAILED,SLA_BREACH&level=error&since=2h&until=2026-03-10T07:00", "after=v1.zz", "since=1d&until=1h", "type=,", "level=ERROR&type=SLA_MET"} {
		f.Add(s, "2026-03-10")
	}
	f.Add("fragment=row", "2026-03-10T25")
	f.Add("", "0000-00-00")
	fx := newFixture(f, fixtureOptions{})
	f.Fuzz(func(t *testing.T, query, period string) {
		for _, target := range []string{"/?" + query, "/ui/events?" + query, "/ui/pipelines/orders?" + query} {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL.RawQuery = query
			req.URL.Path = target[:len(target)-len(query)-1]
			rec := httptest.NewRecorder()
			fx.h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("GET %s?%q: %d %s", req.URL.Path, query, rec.Code, rec.Body.String())
			}
		}
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = "/ui/pipelines/orders/periods/" + period
		rec := httptest.NewRecorder()
		fx.h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("GET %q: %d %s", req.URL.Path, rec.Code, rec.Body.String())
		}
	})
}
