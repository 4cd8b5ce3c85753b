package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDefaultsParse sets every variable to its documented default on a
// fresh struct: each default must parse as its kind.
func TestDefaultsParse(t *testing.T) {
	for _, v := range Vars(&Config{}) {
		t.Run(v.Name, func(t *testing.T) {
			if err := v.set(v.Default); err != nil {
				t.Fatalf("default %q does not parse: %v", v.Default, err)
			}
		})
	}
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("Defaults() does not validate: %v", err)
	}
}

// TestLoadEmptyEqualsDefaults: nothing set anywhere gives exactly Defaults(),
// field by field.
func TestLoadEmptyEqualsDefaults(t *testing.T) {
	got := mustLoad(t, env{})
	compareConfigs(t, got, Defaults())

	// A nil Getenv is an empty environment, not a panic.
	c, err := Load(Source{})
	if err != nil {
		t.Fatalf("Load(Source{}): %v", err)
	}
	compareConfigs(t, c, Defaults())
}

// TestLoadDefaultsExplicitly sets every variable to its default in the
// environment: the result is still Defaults().
func TestLoadDefaultsExplicitly(t *testing.T) {
	e := env{}
	for _, v := range Vars(&Config{}) {
		e[v.Name] = v.Default
	}
	compareConfigs(t, mustLoad(t, e), Defaults())
}

// TestTemplateRoundTrip uncomments every assignment of Template() into a
// .env file: loading it gives Defaults().
func TestTemplateRoundTrip(t *testing.T) {
	tmpl := Template()
	assign := regexp.MustCompile(`(?m)^# (SVC_[A-Z0-9_]+=.*)$`)
	matches := assign.FindAllStringSubmatch(tmpl, -1)
	if n := len(Vars(&Config{})); len(matches) != n {
		t.Fatalf("template has %d assignments, table has %d variables", len(matches), n)
	}
	var b strings.Builder
	for _, m := range matches {
		b.WriteString(m[1] + "\n")
	}
	dir := t.TempDir()
	writeFile(t, dir, ".env", b.String())
	c, err := Load(Source{Getenv: env{}.getenv, WorkDir: dir})
	if err != nil {
		t.Fatalf("Load of the uncommented template: %v", err)
	}
	c.Sources = nil
	compareConfigs(t, c, Defaults())
	for _, g := range Groups {
		if !strings.Contains(tmpl, "# --- "+g+" ---") {
			t.Errorf("template lacks group %s", g)
		}
	}
}

func compareConfigs(t *testing.T, got, want *Config) {
	t.Helper()
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := 0; i < gv.NumField(); i++ {
		f := gv.Type().Field(i)
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("%s = %#v, want %#v", f.Name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}

// TestVarTable checks the table itself: unique SVC_ names, known groups and
// kinds, a bound field of the right type, and every Config field (except
// Sources) bound by exactly one variable.
func TestVarTable(t *testing.T) {
	c := &Config{}
	bound := map[uintptr]string{}
	groups := map[string]bool{}
	for _, g := range Groups {
		groups[g] = true
	}
	names := map[string]bool{}
	for _, v := range Vars(c) {
		if names[v.Name] {
			t.Errorf("%s: listed twice", v.Name)
		}
		names[v.Name] = true
	}
	for _, v := range Vars(c) {
		if !strings.HasPrefix(v.Name, "SVC_") || v.Name != strings.ToUpper(v.Name) {
			t.Errorf("%s: bad name", v.Name)
		}
		if v.File && names[v.Name+"_FILE"] {
			t.Errorf("%s_FILE is both a variable and a companion", v.Name)
		}
		if !groups[v.Group] {
			t.Errorf("%s: unknown group %q", v.Name, v.Group)
		}
		if v.Doc == "" {
			t.Errorf("%s: no doc", v.Name)
		}
		if v.File && v.Kind != String {
			t.Errorf("%s: _FILE companions are for strings", v.Name)
		}
		var p uintptr
		n := 0
		for kind, ptr := range map[Kind]any{String: v.str, Int: v.num, Bool: v.flg, CSV: v.lst, Duration: v.dur} {
			if rp := reflect.ValueOf(ptr); !rp.IsNil() {
				n++
				p = rp.Pointer()
				if kind != v.Kind {
					t.Errorf("%s: kind %s bound to a %s field", v.Name, v.Kind, kind)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: bound to %d fields", v.Name, n)
			continue
		}
		if prev, dup := bound[p]; dup {
			t.Errorf("%s and %s bind the same field", prev, v.Name)
		}
		bound[p] = v.Name
	}
	rv := reflect.ValueOf(c).Elem()
	for i := 0; i < rv.NumField(); i++ {
		name := rv.Type().Field(i).Name
		if name == "Sources" || name == "Warnings" {
			continue
		}
		if _, ok := bound[rv.Field(i).Addr().Pointer()]; !ok {
			t.Errorf("Config.%s has no variable", name)
		}
	}
	if len(bound) != rv.NumField()-2 {
		t.Errorf("%d variables for %d fields", len(bound), rv.NumField()-2)
	}

	// The credential variables accept _FILE (docs/decisions/0002-configuration.md).
	for _, name := range []string{"SVC_POSTGRES_URL", "SVC_JWT_SIGNING_KEY", "SVC_METRICS_BEARER", "SVC_HMAC_SECRET", "SVC_BOOTSTRAP_CLIENT_SECRET"} {
		if v := varByName(t, c, name); !v.File || !v.Secret {
			t.Errorf("%s: want File and Secret", name)
		}
	}
}

// TestParseErrors feeds bad values to every variable of each kind: each is
// refused with an error naming that variable.
func TestParseErrors(t *testing.T) {
	bad := map[Kind][]string{
		Int:      {"abc", "1.5", "99999999999", "-99999999999", "0x10", "1e3", "12abc", "8 0"},
		Bool:     {"yes please", "yes", "on", "2", "truthy"},
		Duration: {"5 minutes", "-1s", "-0.5h", "10", "1d", "abc", "5m-"},
	}
	for _, v := range Vars(&Config{}) {
		for _, raw := range bad[v.Kind] {
			t.Run(v.Name+"="+raw, func(t *testing.T) {
				_, err := loadEnv(t, env{v.Name: raw})
				wantVar(t, err, v.Name)
			})
		}
	}
}

// TestParseAccepted covers the accepted spellings of each kind.
func TestParseAccepted(t *testing.T) {
	cases := []struct {
		name string
		env  env
		get  func(c *Config) any
		want any
	}{
		{"int trimmed", env{"SVC_HTTP_PORT": " 8181 "}, func(c *Config) any { return c.HTTPPort }, 8181},
		{"int plus sign", env{"SVC_HTTP_PORT": "+8181"}, func(c *Config) any { return c.HTTPPort }, 8181},
		{"int at int32 max", env{"SVC_POSTGRES_MAX_CONNS": "2147483647"}, func(c *Config) any { return c.PostgresMaxConns }, 2147483647},
		{"int set but empty is the default", env{"SVC_HTTP_PORT": ""}, func(c *Config) any { return c.HTTPPort }, 8080},
		{"bool 1", env{"SVC_OTEL_ENABLED": "1"}, func(c *Config) any { return c.OTelEnabled }, true},
		{"bool TRUE", env{"SVC_OTEL_ENABLED": "TRUE"}, func(c *Config) any { return c.OTelEnabled }, true},
		{"bool f", env{"SVC_CORS_ENABLED": "f"}, func(c *Config) any { return c.CORSEnabled }, false},
		{"bool trimmed", env{"SVC_CORS_ENABLED": " false "}, func(c *Config) any { return c.CORSEnabled }, false},
		{"bool set but empty is the default", env{"SVC_CORS_ENABLED": ""}, func(c *Config) any { return c.CORSEnabled }, true},
		{"duration 0", env{"SVC_HTTP_READ_TIMEOUT": "0"}, func(c *Config) any { return c.HTTPReadTimeout }, time.Duration(0)},
		{"duration compound", env{"SVC_SEARCH_SNAPSHOT_TTL": "1h30m"}, func(c *Config) any { return c.SearchSnapshotTTL }, 90 * time.Minute},
		{"duration fractional", env{"SVC_SCHEDULER_SCAN_INTERVAL": "1.5s"}, func(c *Config) any { return c.SchedulerScanInterval }, 1500 * time.Millisecond},
		{"duration trimmed", env{"SVC_PROXY_TIMEOUT": " 45s "}, func(c *Config) any { return c.ProxyTimeout }, 45 * time.Second},
		{"duration set but empty is the default", env{"SVC_PROXY_TIMEOUT": ""}, func(c *Config) any { return c.ProxyTimeout }, 30 * time.Second},
		{"csv trimmed, empty items dropped", env{"SVC_SEED_NODES": " a:1 ,, b:2 ,"}, func(c *Config) any { return c.SeedNodes }, []string{"a:1", "b:2"}},
		{"csv empty", env{"SVC_SEED_NODES": ""}, func(c *Config) any { return c.SeedNodes }, []string(nil)},
		{"mock roles empty keeps the default", env{"SVC_IAM_MOCK_ROLES": " , "}, func(c *Config) any { return c.MockRoles }, []string{"ROLE_ADMIN", "ROLE_M2M"}},
		{"mock roles set", env{"SVC_IAM_MOCK_ROLES": "ROLE_USER"}, func(c *Config) any { return c.MockRoles }, []string{"ROLE_USER"}},
		{"string kept as is", env{"SVC_JWT_ISSUER": " iss "}, func(c *Config) any { return c.JWTIssuer }, " iss "},
		{"log level warning becomes warn", env{"SVC_LOG_LEVEL": "warning"}, func(c *Config) any { return c.LogLevel }, "warn"},
		{"distribution forced to self without clustering", env{"SVC_SCHEDULER_DISTRIBUTION": "round-robin"}, func(c *Config) any { return c.SchedulerDistribution }, "self"},
		{"distribution kept in a cluster", clusterEnv, func(c *Config) any { return c.SchedulerDistribution }, "round-robin"},
		{"distribution self in a cluster", clusterEnv.with("SVC_SCHEDULER_DISTRIBUTION", "self"), func(c *Config) any { return c.SchedulerDistribution }, "self"},
		{"schema savepoint interval 0 is the default", env{"SVC_SCHEMA_SAVEPOINT_INTERVAL": "0"}, func(c *Config) any { return c.SchemaSavepointInterval }, 64},
		{"schema extend retries -1 is the default", env{"SVC_SCHEMA_EXTEND_MAX_RETRIES": "-1"}, func(c *Config) any { return c.SchemaExtendMaxRetries }, 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, tc.env)
			if got := tc.get(c); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestClamps(t *testing.T) {
	cases := []struct {
		name string
		env  env
		get  func(c *Config) int
		want int
	}{
		{"stats group max default", env{}, func(c *Config) int { return c.StatsGroupMax }, 10000},
		{"stats group max 0", env{"SVC_STATS_GROUP_MAX": "0"}, func(c *Config) int { return c.StatsGroupMax }, 10000},
		{"stats group max -5", env{"SVC_STATS_GROUP_MAX": "-5"}, func(c *Config) int { return c.StatsGroupMax }, 10000},
		{"stats group max 1", env{"SVC_STATS_GROUP_MAX": "1"}, func(c *Config) int { return c.StatsGroupMax }, 1},
		{"stats group max 50000", env{"SVC_STATS_GROUP_MAX": "50000"}, func(c *Config) int { return c.StatsGroupMax }, 50000},
		{"sort keys default", env{}, func(c *Config) int { return c.SearchMaxSortKeys }, 16},
		{"sort keys 0", env{"SVC_SEARCH_MAX_SORT_KEYS": "0"}, func(c *Config) int { return c.SearchMaxSortKeys }, 16},
		{"sort keys -1", env{"SVC_SEARCH_MAX_SORT_KEYS": "-1"}, func(c *Config) int { return c.SearchMaxSortKeys }, 16},
		{"sort keys 3", env{"SVC_SEARCH_MAX_SORT_KEYS": "3"}, func(c *Config) int { return c.SearchMaxSortKeys }, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.get(mustLoad(t, tc.env)); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// TestMaxPerTenantTracksWorkers: the per-tenant cap follows the worker
// count unless SVC_SEARCH_ASYNC_MAX_PER_TENANT itself is set.
func TestMaxPerTenantTracksWorkers(t *testing.T) {
	cases := []struct {
		name string
		env  env
		file string // .env content
		want int
	}{
		{"default", env{}, "", 8},
		{"workers raised", env{"SVC_SEARCH_ASYNC_WORKERS": "3"}, "", 3},
		{"workers raised in a file", env{}, "SVC_SEARCH_ASYNC_WORKERS=12\n", 12},
		{"explicit cap", env{"SVC_SEARCH_ASYNC_WORKERS": "3", "SVC_SEARCH_ASYNC_MAX_PER_TENANT": "5"}, "", 5},
		{"explicit cap equal to the default", env{"SVC_SEARCH_ASYNC_WORKERS": "3", "SVC_SEARCH_ASYNC_MAX_PER_TENANT": "8"}, "", 8},
		{"explicit 0 disables", env{"SVC_SEARCH_ASYNC_WORKERS": "3", "SVC_SEARCH_ASYNC_MAX_PER_TENANT": "0"}, "", 0},
		{"explicit cap in a file", env{"SVC_SEARCH_ASYNC_WORKERS": "3"}, "SVC_SEARCH_ASYNC_MAX_PER_TENANT=6\n", 6},
		{"set but empty still tracks", env{"SVC_SEARCH_ASYNC_WORKERS": "3", "SVC_SEARCH_ASYNC_MAX_PER_TENANT": ""}, "", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				writeFile(t, dir, ".env", tc.file)
			}
			c, err := Load(Source{Getenv: tc.env.getenv, WorkDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if c.SearchAsyncMaxPerTenant != tc.want {
				t.Fatalf("SearchAsyncMaxPerTenant = %d, want %d", c.SearchAsyncMaxPerTenant, tc.want)
			}
		})
	}
}

func TestContextPath(t *testing.T) {
	cases := []struct {
		name string
		env  env
		file string
		want string
	}{
		{"default", env{}, "", "/api"},
		{"trailing slash trimmed", env{"SVC_CONTEXT_PATH": "/api/"}, "", "/api"},
		{"several trailing slashes", env{"SVC_CONTEXT_PATH": "/svc/api//"}, "", "/svc/api"},
		{"slash alone is the root", env{"SVC_CONTEXT_PATH": "/"}, "", ""},
		{"empty is the root", env{"SVC_CONTEXT_PATH": ""}, "", ""},
		{"from a file", env{}, "SVC_CONTEXT_PATH=/files/\n", "/files"},
		{"empty in a file is the root", env{}, "SVC_CONTEXT_PATH=\n", ""},
		{"set but empty in the environment beats a file", env{"SVC_CONTEXT_PATH": ""}, "SVC_CONTEXT_PATH=/files\n", ""},
		{"environment beats a file", env{"SVC_CONTEXT_PATH": "/env"}, "SVC_CONTEXT_PATH=/files\n", "/env"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				writeFile(t, dir, ".env", tc.file)
			}
			c, err := Load(Source{Getenv: tc.env.getenv, WorkDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if c.ContextPath != tc.want {
				t.Fatalf("ContextPath = %q, want %q", c.ContextPath, tc.want)
			}
		})
	}
	_, err := loadEnv(t, env{"SVC_CONTEXT_PATH": "api/"})
	wantVar(t, err, "SVC_CONTEXT_PATH")
}
