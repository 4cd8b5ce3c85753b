package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// layers is a full set of configuration sources in a temporary directory.
type layers struct {
	dir, work, user, system string
}

func newLayers(t *testing.T) layers {
	t.Helper()
	dir := t.TempDir()
	l := layers{dir: dir, work: filepath.Join(dir, "work"), user: filepath.Join(dir, "home", "svc.env"), system: filepath.Join(dir, "etc", "svc.env")}
	if err := os.MkdirAll(l.work, 0o755); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l layers) source(e env) Source {
	return Source{Getenv: e.getenv, WorkDir: l.work, UserFile: l.user, SystemFile: l.system}
}

// TestPrecedence adds the sources one at a time, lowest first: each new
// layer overrides all below it, and a variable only a lower layer sets still
// comes through.
func TestPrecedence(t *testing.T) {
	type layer struct{ name, file string }
	order := []layer{
		{"system", "system"},
		{"user", "user"},
		{".env", ".env"},
		{".env.p1", ".env.p1"},
		{".env.p2", ".env.p2"},
	}
	for n := 1; n <= len(order); n++ {
		top := order[n-1]
		t.Run("up to "+top.name, func(t *testing.T) {
			l := newLayers(t)
			var want []string
			for i, ly := range order[:n] {
				content := "SVC_JWT_ISSUER=" + ly.name + "\n"
				// Each layer also sets a variable of its own, which no
				// higher layer touches.
				content += []string{"SVC_BOOTSTRAP_TENANT_ID", "SVC_BOOTSTRAP_USER_ID", "SVC_OIDC_ROLES_CLAIM", "SVC_JWT_AUDIENCE", "SVC_NODE_ID"}[i] + "=only-" + ly.name + "\n"
				var p string
				switch ly.file {
				case "system":
					p = l.system
				case "user":
					p = l.user
				default:
					p = filepath.Join(l.work, ly.file)
				}
				writeFile(t, filepath.Dir(p), filepath.Base(p), content)
				want = append(want, p)
			}
			c, err := Load(l.source(env{"SVC_PROFILES": "p1,p2"}))
			if err != nil {
				t.Fatal(err)
			}
			if c.JWTIssuer != top.name {
				t.Errorf("SVC_JWT_ISSUER = %q, want %q", c.JWTIssuer, top.name)
			}
			only := []string{c.BootstrapTenantID, c.BootstrapUserID, c.OIDCRolesClaim, c.JWTAudience, c.NodeID}
			for i, ly := range order[:n] {
				if only[i] != "only-"+ly.name {
					t.Errorf("layer %s's own variable = %q", ly.name, only[i])
				}
			}
			if !reflect.DeepEqual(c.Sources, want) {
				t.Errorf("Sources = %q, want %q", c.Sources, want)
			}
			if !reflect.DeepEqual(c.Profiles, []string{"p1", "p2"}) {
				t.Errorf("Profiles = %q", c.Profiles)
			}

			// The process environment beats every file, even when empty.
			c, err = Load(l.source(env{"SVC_PROFILES": "p1,p2", "SVC_JWT_ISSUER": "process"}))
			if err != nil {
				t.Fatal(err)
			}
			if c.JWTIssuer != "process" {
				t.Errorf("with the process env: SVC_JWT_ISSUER = %q", c.JWTIssuer)
			}
			c, err = Load(l.source(env{"SVC_PROFILES": "p1,p2", "SVC_JWT_ISSUER": ""}))
			if err != nil {
				t.Fatal(err)
			}
			if c.JWTIssuer != "" {
				t.Errorf("set but empty in the process env: SVC_JWT_ISSUER = %q", c.JWTIssuer)
			}
		})
	}
}

func TestProfiles(t *testing.T) {
	l := newLayers(t)
	writeFile(t, l.work, ".env", "SVC_JWT_ISSUER=dotenv\nSVC_PROFILES=p1\n")
	writeFile(t, l.work, ".env.p1", "SVC_JWT_ISSUER=p1\n")
	writeFile(t, l.work, ".env.p2", "SVC_JWT_ISSUER=p2\n")
	cases := []struct {
		name     string
		profiles *string
		issuer   string
		loaded   []string
	}{
		{"p1,p2: later wins", ptr("p1,p2"), "p2", []string{".env", ".env.p1", ".env.p2"}},
		{"p2,p1: order reversed", ptr("p2,p1"), "p1", []string{".env", ".env.p2", ".env.p1"}},
		{"names trimmed, empty items dropped", ptr(" p2 ,, p1 ,"), "p1", []string{".env", ".env.p2", ".env.p1"}},
		{"a missing profile file is skipped", ptr("p1,missing,p2"), "p2", []string{".env", ".env.p1", ".env.p2"}},
		{"only missing profiles", ptr("nope"), "dotenv", []string{".env"}},
		{"SVC_PROFILES only inside a file loads nothing", nil, "dotenv", []string{".env"}},
		{"set but empty", ptr(""), "dotenv", []string{".env"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := env{}
			if tc.profiles != nil {
				e["SVC_PROFILES"] = *tc.profiles
			}
			c, err := Load(l.source(e))
			if err != nil {
				t.Fatal(err)
			}
			if c.JWTIssuer != tc.issuer {
				t.Errorf("SVC_JWT_ISSUER = %q, want %q", c.JWTIssuer, tc.issuer)
			}
			var want []string
			for _, f := range tc.loaded {
				want = append(want, filepath.Join(l.work, f))
			}
			if !reflect.DeepEqual(c.Sources, want) {
				t.Errorf("Sources = %q, want %q", c.Sources, want)
			}
			if tc.profiles == nil && c.Profiles != nil {
				t.Errorf("SVC_PROFILES from a file reached Config.Profiles: %q", c.Profiles)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestInvalidProfileNames(t *testing.T) {
	for _, p := range []string{"../etc", "..", "a/b", "/abs", `a\b`, "p1,../../secret", "x..y"} {
		t.Run(p, func(t *testing.T) {
			l := newLayers(t)
			_, err := Load(l.source(env{"SVC_PROFILES": p}))
			wantVar(t, err, "SVC_PROFILES")
		})
	}
}

func TestFilesSkippedAndBroken(t *testing.T) {
	t.Run("nothing exists", func(t *testing.T) {
		l := newLayers(t)
		c, err := Load(l.source(env{"SVC_PROFILES": "p1"}))
		if err != nil {
			t.Fatal(err)
		}
		if c.Sources != nil {
			t.Errorf("Sources = %q", c.Sources)
		}
	})
	t.Run("a directory named .env is skipped", func(t *testing.T) {
		l := newLayers(t)
		if err := os.Mkdir(filepath.Join(l.work, ".env"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(l.source(env{})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no working directory skips .env and profiles", func(t *testing.T) {
		l := newLayers(t)
		writeFile(t, l.work, ".env", "SVC_JWT_ISSUER=dotenv\n")
		src := l.source(env{"SVC_PROFILES": "../x"})
		src.WorkDir = ""
		c, err := Load(src)
		if err != nil {
			t.Fatal(err)
		}
		if c.JWTIssuer != "svc" {
			t.Errorf("SVC_JWT_ISSUER = %q", c.JWTIssuer)
		}
	})
	t.Run("unparsable file names the file on one line", func(t *testing.T) {
		l := newLayers(t)
		p := writeFile(t, l.work, ".env", "SVC_JWT_ISSUER=\"unterminated\nSVC_HTTP_PORT=1\n")
		_, err := Load(l.source(env{}))
		wantVar(t, err, p)
	})
	t.Run("bad value in a file names the variable", func(t *testing.T) {
		l := newLayers(t)
		writeFile(t, filepath.Dir(l.user), filepath.Base(l.user), "SVC_HTTP_PORT=abc\n")
		_, err := Load(l.source(env{}))
		wantVar(t, err, "SVC_HTTP_PORT")
	})
	t.Run("the process env hides a bad file value", func(t *testing.T) {
		l := newLayers(t)
		writeFile(t, l.work, ".env", "SVC_HTTP_PORT=abc\n")
		c, err := Load(l.source(env{"SVC_HTTP_PORT": "8181"}))
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTPPort != 8181 {
			t.Errorf("HTTPPort = %d", c.HTTPPort)
		}
	})
	t.Run("dotenv syntax", func(t *testing.T) {
		l := newLayers(t)
		writeFile(t, l.work, ".env", "# comment\nexport SVC_JWT_ISSUER=exported\nSVC_JWT_AUDIENCE='single quoted' # trailing comment\nSVC_NODE_ID=\"double quoted\"\n\n")
		c, err := Load(l.source(env{}))
		if err != nil {
			t.Fatal(err)
		}
		if c.JWTIssuer != "exported" || c.JWTAudience != "single quoted" || c.NodeID != "double quoted" {
			t.Errorf("got %q %q %q", c.JWTIssuer, c.JWTAudience, c.NodeID)
		}
	})
}

// fileVars lists every variable with a _FILE companion.
func fileVars(t *testing.T) []string {
	var out []string
	for _, v := range Vars(&Config{}) {
		if v.File {
			out = append(out, v.Name)
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d _FILE variables: %v", len(out), out)
	}
	return out
}

// value reads the string a variable landed in.
func value(t *testing.T, c *Config, name string) string {
	t.Helper()
	return *varByName(t, c, name).str
}

func TestFileCompanions(t *testing.T) {
	for _, name := range fileVars(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cases := []struct {
				name    string
				content string // written to a file whose path goes in NAME_FILE
				plain   *string
				want    string
			}{
				{"trailing newline stripped", "from-file\n", nil, "from-file"},
				{"trailing CRLF stripped", "from-file\r\n", nil, "from-file"},
				{"trailing spaces and tabs stripped", "from-file \t \n\n", nil, "from-file"},
				{"leading and inner whitespace kept", "  from file", nil, "  from file"},
				{"multi-line value kept", "line1\nline2\n", nil, "line1\nline2"},
				{"file wins over the plain variable", "from-file\n", ptr("plain"), "from-file"},
				{"empty file counts as unset", "", ptr("plain"), ""},
				{"whitespace-only file counts as unset", " \r\n\t\n", ptr("plain"), ""},
			}
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					p := writeFile(t, dir, strings.Repeat("f", i+1), tc.content)
					e := env{name + "_FILE": p}
					if tc.plain != nil {
						e[name] = *tc.plain
					}
					c := mustLoad(t, e)
					if got := value(t, c, name); got != tc.want {
						t.Fatalf("%s = %q, want %q", name, got, tc.want)
					}
				})
			}
			t.Run("plain variable alone", func(t *testing.T) {
				if got := value(t, mustLoad(t, env{name: "plain"}), name); got != "plain" {
					t.Fatalf("%s = %q", name, got)
				}
			})
			t.Run("empty _FILE path is ignored", func(t *testing.T) {
				if got := value(t, mustLoad(t, env{name: "plain", name + "_FILE": ""}), name); got != "plain" {
					t.Fatalf("%s = %q", name, got)
				}
			})
			t.Run("missing file is an error naming _FILE", func(t *testing.T) {
				_, err := loadEnv(t, env{name: "plain", name + "_FILE": filepath.Join(dir, "does-not-exist")})
				wantVar(t, err, name+"_FILE")
			})
			t.Run("directory is an error naming _FILE", func(t *testing.T) {
				_, err := loadEnv(t, env{name + "_FILE": dir})
				wantVar(t, err, name+"_FILE")
			})
			t.Run("_FILE from a .env file", func(t *testing.T) {
				secret := writeFile(t, dir, "secret", "from-file\n")
				l := newLayers(t)
				writeFile(t, l.work, ".env", name+"_FILE="+secret+"\n")
				c, err := Load(l.source(env{}))
				if err != nil {
					t.Fatal(err)
				}
				if got := value(t, c, name); got != "from-file" {
					t.Fatalf("%s = %q", name, got)
				}
			})
		})
	}
}

// TestFileCompanionsFeedValidation: a secret read from a file takes part in
// validation like a plain one, and an empty file is reported downstream.
func TestFileCompanionsFeedValidation(t *testing.T) {
	dir := t.TempDir()
	key := writeFile(t, dir, "key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	empty := writeFile(t, dir, "empty", "\n")
	hmac := writeFile(t, dir, "hmac", hmac64+"\r\n")
	shortHMAC := writeFile(t, dir, "short", hmac64[:60]+"\n")
	cases := []struct {
		name string
		env  env
		want string
	}{
		{"jwt key from file", env{"SVC_IAM_MODE": "jwt", "SVC_JWT_SIGNING_KEY_FILE": key}, ""},
		{"jwt key file empty", env{"SVC_IAM_MODE": "jwt", "SVC_JWT_SIGNING_KEY_FILE": empty, "SVC_JWT_SIGNING_KEY": "plain"}, "SVC_JWT_SIGNING_KEY"},
		{"jwt key file missing", env{"SVC_IAM_MODE": "jwt", "SVC_JWT_SIGNING_KEY_FILE": "/nonexistent/key.pem"}, "SVC_JWT_SIGNING_KEY_FILE"},
		{"hmac from file with CRLF", clusterEnv.with("SVC_HMAC_SECRET", "", "SVC_HMAC_SECRET_FILE", hmac), ""},
		{"short hmac from file", clusterEnv.with("SVC_HMAC_SECRET_FILE", shortHMAC), "SVC_HMAC_SECRET"},
		{"metrics bearer file empty", env{"SVC_METRICS_REQUIRE_AUTH": "true", "SVC_METRICS_BEARER_FILE": empty}, "SVC_METRICS_BEARER"},
		{"bootstrap secret file empty", env{"SVC_BOOTSTRAP_CLIENT_ID": "boot", "SVC_BOOTSTRAP_CLIENT_SECRET_FILE": empty}, "SVC_BOOTSTRAP_CLIENT_SECRET"},
		{"postgres url file empty", env{"SVC_STORAGE_BACKEND": "postgres", "SVC_POSTGRES_URL_FILE": empty}, "SVC_POSTGRES_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadEnv(t, tc.env)
			wantVar(t, err, tc.want)
		})
	}
	c := mustLoad(t, env{"SVC_IAM_MODE": "jwt", "SVC_JWT_SIGNING_KEY_FILE": key})
	if want := "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"; c.JWTSigningKey != want {
		t.Errorf("JWTSigningKey = %q", c.JWTSigningKey)
	}
}

// TestNoFileCompanionForOrdinaryVars: _FILE is honoured only where the
// table says so.
func TestNoFileCompanionForOrdinaryVars(t *testing.T) {
	p := writeFile(t, t.TempDir(), "issuer", "from-file\n")
	c := mustLoad(t, env{"SVC_JWT_ISSUER_FILE": p})
	if c.JWTIssuer != "svc" {
		t.Fatalf("SVC_JWT_ISSUER = %q", c.JWTIssuer)
	}
}

func TestUserConfigFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if got := UserConfigFile(); got != "/xdg/svc/svc.env" {
		t.Errorf("with XDG_CONFIG_HOME: %q", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := UserConfigFile(); got != "/home/u/.config/svc/svc.env" {
		t.Errorf("with HOME: %q", got)
	}
	src := OSSource()
	if src.SystemFile != "/etc/svc/svc.env" || src.UserFile != "/home/u/.config/svc/svc.env" || src.WorkDir == "" || src.Getenv == nil {
		t.Errorf("OSSource() = %+v", src)
	}
}
