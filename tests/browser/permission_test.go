package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// SetPermission changes what the page's own APIs report: the permission
// starts at "default" (never asked), and a grant makes
// Notification.requestPermission resolve "granted" and a notification
// really show (its show event fires); a denial is reported as such.
func TestSetPermission(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>perm</title><button id="ask">ask</button><p id="out">-</p><script>
document.getElementById('ask').addEventListener('click', function () {
  Notification.requestPermission().then(function (p) {
    var out = document.getElementById('out');
    out.textContent = p;
    if (p !== 'granted') return;
    var n = new Notification('test', { body: 'from the test' });
    n.addEventListener('show', function () { out.textContent = p + ' shown'; });
  });
});</script>`)
	}))
	t.Cleanup(srv.Close)
	b := Start(t)
	tests := []struct{ state, want string }{
		{"granted", "granted shown"},
		{"denied", "denied"},
	}
	for _, tc := range tests {
		b.Navigate(srv.URL + "/")
		if got := b.Script(`return Notification.permission`); got != "default" && tc.state == "granted" {
			t.Fatalf("Notification.permission before any grant = %v, want default", got)
		}
		b.SetPermission("notifications", tc.state)
		if got := b.Script(`return Notification.permission`); got != tc.state {
			t.Fatalf("Notification.permission = %v, want %s", got, tc.state)
		}
		b.Find("#ask").Click()
		b.WaitText("#out", tc.want, 0)
	}
}
