//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"svc/internal/await"
)

// feedPage opens two EventSources against svc (another origin on
// loopback: svc's CORS loopback mode lets it read them) — the live stream
// /changes and a durable subscription's /events — creates three entities
// with fetch once both are open, and posts what each stream delivered to
// /result on its own origin.
const feedPage = `<!doctype html><html><body><pre id="out">waiting</pre><script>
const q = new URLSearchParams(location.search), api = q.get('api'), sub = q.get('sub');
const got = {live: [], durable: []}, created = [];
let opened = 0, reported = false;
function trace(m) { fetch('/log', {method: 'POST', body: m}); }
window.onerror = (m) => trace('page error: ' + m);
function report(r) {
  if (reported) return;
  reported = true;
  document.getElementById('out').textContent = JSON.stringify(r);
  fetch('/result', {method: 'POST', body: JSON.stringify(r)});
}
const streams = {
  live: new EventSource(api + '/changes?modelName=order&modelVersion=1&kinds=CREATE&includeBody=AFTER'),
  durable: new EventSource(api + '/subscriptions/' + sub + '/events'),
};
async function createAll() {
  try {
    for (let i = 0; i < 3; i++) {
      const r = await fetch(api + '/entity/JSON/order/1', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({n: i, w: 7})});
      if (!r.ok) { report({error: 'create: HTTP ' + r.status + ' ' + await r.text()}); return; }
      created.push((await r.json())[0].entityIds[0]);
    }
    trace('created ' + created.join(' '));
    maybeDone();
  } catch (e) { report({error: 'create: ' + e}); }
}
// The events may arrive before the last create's answer does.
function maybeDone() {
  if (got.live.length >= 3 && got.durable.length >= 3 && created.length === 3) {
    streams.live.close(); streams.durable.close();
    report({got, created});
  }
}
for (const [name, es] of Object.entries(streams)) {
  es.onopen = () => { trace(name + ' open'); if (++opened === 2) createAll(); };
  es.onerror = () => { trace(name + ' error, readyState ' + es.readyState); if (es.readyState === EventSource.CLOSED) report({error: name + ': the EventSource closed'}); };
  es.addEventListener('cut', e => report({error: name + ' cut: ' + e.data}));
  es.addEventListener('change', e => {
    got[name].push({lastEventId: e.lastEventId, event: JSON.parse(e.data)});
    maybeDone();
  });
}
</script></body></html>`

// TestChangeFeedInBrowserEventSource: headless Chromium loads feedPage
// from a loopback server; the page's EventSources receive, from svc (the
// real binary, mock auth, the CORS loopback default), the CREATE event of
// every entity the page created, on the live stream and on the durable
// subscription, each with its cursor as the SSE id (EventSource's
// lastEventId, what it sends back as Last-Event-ID on reconnect).
func TestChangeFeedInBrowserEventSource(t *testing.T) {
	t.Parallel()
	if os.Getenv("SVC_SKIP_BROWSER_TEST") == "1" {
		t.Skip("SVC_SKIP_BROWSER_TEST=1")
	}
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Fatal("chromium is not installed: run scripts/test-deps.sh (apt-get install chromium), or set SVC_SKIP_BROWSER_TEST=1 to skip this test")
	}
	if testing.Short() {
		t.Skip("-short: headless browser run skipped")
	}
	n := startFeedNode(t)
	n.orderModel()
	s := n.subscribe(`{"filter":{"modelName":"order","modelVersion":1},"includeBody":"AFTER"}`)

	type result struct {
		Error string `json:"error"`
		Got   map[string][]struct {
			LastEventID string `json:"lastEventId"`
			Event       struct {
				EntityID  string          `json:"entityId"`
				Kind      string          `json:"kind"`
				Cursor    string          `json:"cursor"`
				BodyAfter json.RawMessage `json:"bodyAfter"`
			} `json:"event"`
		} `json:"got"`
		Created []string `json:"created"`
	}
	results := make(chan result, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, feedPage)
	})
	mux.HandleFunc("/result", func(w http.ResponseWriter, r *http.Request) {
		var res result
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &res); err != nil {
			res.Error = "unreadable result: " + string(b)
		}
		select {
		case results <- res:
		default:
		}
	})
	mux.HandleFunc("/log", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		t.Logf("page: %s", b)
	})
	mux.HandleFunc("/favicon.ico", http.NotFound)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	var stderr bytes.Buffer
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--remote-debugging-port=0", "--user-data-dir="+t.TempDir(), fmt.Sprintf("http://%s/page?api=%s&sub=%s", ln.Addr(), n.base, s.ID))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()

	var res result
	select {
	case res = <-results:
	case <-time.After(await.Long * 2):
		t.Fatalf("the page reported nothing\nchromium's console and errors:\n%s", consoleLines(stderr.Bytes()))
	}
	if res.Error != "" {
		t.Fatalf("the page: %s", res.Error)
	}
	if len(res.Created) != 3 {
		t.Fatalf("the page created %v", res.Created)
	}
	for _, stream := range []string{"live", "durable"} {
		evs := res.Got[stream]
		if len(evs) != 3 {
			t.Fatalf("%s: %d events", stream, len(evs))
		}
		for i, e := range evs {
			if e.Event.EntityID != res.Created[i] || e.Event.Kind != "CREATE" || e.LastEventID == "" || e.LastEventID != e.Event.Cursor ||
				!bytes.Contains(e.Event.BodyAfter, []byte(fmt.Sprintf(`"n":%d`, i))) {
				t.Fatalf("%s event %d: %+v (created %v)", stream, i, e, res.Created)
			}
		}
	}
}

// consoleLines are chromium's log lines but its D-Bus complaints (no
// session bus in a test).
func consoleLines(b []byte) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "dbus") && !strings.Contains(l, "DBus") && strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > 60 {
		out = out[len(out)-60:]
	}
	return strings.Join(out, "\n")
}
