package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/joho/godotenv"
)

// Error is a configuration problem: the variable and why it is refused. The
// CLI prints it on one line and exits 1.
type Error struct {
	Var    string
	Reason string
}

// Error is always a single line: the CLI prints it as the only line of
// output before exiting.
func (e *Error) Error() string {
	return oneLine.Replace(e.Var + ": " + e.Reason)
}

var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

func errf(name, format string, a ...any) *Error {
	return &Error{Var: name, Reason: fmt.Sprintf(format, a...)}
}

// Source says where configuration comes from. OSSource is the real one;
// tests build their own.
type Source struct {
	// Getenv looks a variable up in the process environment; ok reports
	// whether it is set at all (an empty value still counts as set).
	Getenv func(name string) (value string, ok bool)
	// Environ lists the process environment (KEY=value), to find unknown
	// SVC_ variables; nil skips that check.
	Environ func() []string
	// WorkDir holds .env and .env.{profile}.
	WorkDir string
	// UserFile and SystemFile are the user and system config files; empty
	// skips them.
	UserFile   string
	SystemFile string
}

// OSSource reads the process environment, the working directory,
// ~/.config/svc/svc.env (or $XDG_CONFIG_HOME/svc/svc.env) and /etc/svc/svc.env.
func OSSource() Source {
	wd, _ := os.Getwd()
	return Source{Getenv: os.LookupEnv, Environ: os.Environ, WorkDir: wd, UserFile: UserConfigFile(), SystemFile: "/etc/svc/svc.env"}
}

// UserConfigFile is where `svc init` writes and the loader reads the user's
// configuration; empty when there is no home directory.
func UserConfigFile() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "svc", "svc.env")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "svc", "svc.env")
}

// DataDir is svc's data directory: $XDG_DATA_HOME/svc, else
// ~/.local/share/svc; empty when there is no home directory.
func DataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "svc")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "svc")
}

// SQLiteFile is the SQLite database file: SVC_SQLITE_PATH, else svc.db in
// DataDir; empty when neither can be had.
func (c *Config) SQLiteFile() string {
	if c.SQLitePath != "" {
		return c.SQLitePath
	}
	if d := DataDir(); d != "" {
		return filepath.Join(d, "svc.db")
	}
	return ""
}

// Load builds the configuration. Precedence, highest first: the process
// environment, .env.{profile} for each SVC_PROFILES entry (later wins), .env
// in the working directory, the user file, the system file, the defaults.
func Load(src Source) (*Config, error) {
	if src.Getenv == nil {
		src.Getenv = func(string) (string, bool) { return "", false }
	}
	files, fileOf, sources, err := readFiles(src)
	if err != nil {
		return nil, err
	}
	var env []string
	if src.Environ != nil {
		env = src.Environ()
	}
	warnings := unknownWarnings(env, files, fileOf)
	// SVC_PROFILES is honoured from the process environment only (it chose
	// the files above); a value inside a file is ignored so that the
	// configuration reports the profiles actually applied.
	delete(files, "SVC_PROFILES")
	lookup := func(name string) (string, bool) {
		if v, ok := src.Getenv(name); ok {
			return v, true
		}
		v, ok := files[name]
		return v, ok
	}

	c := &Config{Sources: sources, Warnings: warnings}
	explicit := map[string]bool{}
	for _, v := range Vars(c) {
		raw, ok := lookup(v.Name)
		if v.File {
			if path, fok := lookup(v.Name + "_FILE"); fok && path != "" {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, errf(v.Name+"_FILE", "cannot read %q: %v", path, unwrapPathErr(err))
				}
				raw = strings.TrimRight(string(b), " \t\r\n")
				ok = raw != ""
			}
		}
		if ok && (v.Kind == String || v.Kind == CSV || strings.TrimSpace(raw) != "") {
			explicit[v.Name] = true
		} else {
			raw = v.Default
		}
		if err := v.set(raw); err != nil {
			return nil, errf(v.Name, "%s", err.Error())
		}
	}
	if err := c.normalize(explicit); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// readFiles merges the .env files, lowest precedence first, so later files
// overwrite earlier ones. SVC_PROFILES comes from the process environment
// only: a profile cannot choose which files load.
func readFiles(src Source) (merged, fileOf map[string]string, used []string, err error) {
	merged, fileOf = map[string]string{}, map[string]string{}
	paths := []string{src.SystemFile, src.UserFile}
	if src.WorkDir != "" {
		paths = append(paths, filepath.Join(src.WorkDir, ".env"))
		profiles, _ := src.Getenv("SVC_PROFILES")
		for _, p := range splitCSV(profiles, false) {
			if strings.ContainsAny(p, `/\`) || strings.Contains(p, "..") {
				return nil, nil, nil, errf("SVC_PROFILES", "invalid profile name %q", p)
			}
			paths = append(paths, filepath.Join(src.WorkDir, ".env."+p))
		}
	}
	for _, path := range paths {
		if path == "" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue // a missing or unreadable file is skipped
		}
		vals, err := godotenv.UnmarshalBytes(b)
		if err != nil {
			return nil, nil, nil, &Error{Var: path, Reason: "cannot parse: " + err.Error()}
		}
		for k, v := range vals {
			merged[k] = v
			fileOf[k] = path
		}
		used = append(used, path)
	}
	return merged, fileOf, used, nil
}
