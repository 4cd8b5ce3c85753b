package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"svc/help"
	"svc/platform/config"
)

// helpCmd renders the topic list, or one topic, to w. The words of
// `svc help config http` are joined with dots, so it equals
// `svc help config.http`. An unknown topic is an error on stderr, exit 1.
func helpCmd(args []string, w io.Writer) int { return helpTo(args, w, os.Stderr) }

func helpTo(args []string, stdout, stderr io.Writer) int {
	tree := help.Default()
	if len(args) == 0 {
		if err := writeCommands(stdout); err != nil {
			fmt.Fprintf(stderr, "svc help: %v\n", err)
			return 1
		}
		if err := tree.WriteIndex(stdout); err != nil {
			fmt.Fprintf(stderr, "svc help: %v\n", err)
			return 1
		}
		return 0
	}
	t, ok := tree.Find(args...)
	if !ok {
		fmt.Fprintf(stderr, "svc help: no such topic %q; `svc help` lists them\n", strings.Join(args, " "))
		return 1
	}
	if err := tree.WriteText(stdout, t); err != nil {
		fmt.Fprintf(stderr, "svc help: %v\n", err)
		return 1
	}
	return 0
}

// health probes the admin listener's /readyz where serve, reading the same
// configuration, binds it: loopback when it listens on every interface.
func health() int {
	cfg, ok := loadConfig(os.Stderr)
	if !ok {
		return 1
	}
	host := cfg.AdminBindAddress
	if ip := net.ParseIP(host); host == "" || host == "*" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort(host, fmt.Sprint(cfg.AdminPort)) + "/readyz")
	if err != nil {
		fmt.Fprintf(os.Stderr, "svc health: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "svc health: /readyz returned %d\n", resp.StatusCode)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// initTemplate is the file `svc init` writes: the commented template with
// the SQLite backend selected (a newcomer's data then survives restarts,
// docs/decisions/0002-configuration.md) and the resolved default file shown.
func initTemplate() string {
	t := config.Template()
	t = strings.Replace(t, "# SVC_STORAGE_BACKEND=memory\n", "SVC_STORAGE_BACKEND=sqlite\n", 1)
	if db := (&config.Config{}).SQLiteFile(); db != "" {
		t = strings.Replace(t, "# SVC_SQLITE_PATH=\n", "# SVC_SQLITE_PATH="+db+"\n", 1)
	}
	return t
}

// initCmd writes the user config file with every variable commented out at
// its default. It never overwrites an existing file.
func initCmd(args []string) int {
	path := config.UserConfigFile()
	if len(args) > 0 && args[0] != "" {
		fmt.Fprintf(os.Stderr, "svc init: takes no arguments\n")
		return 2
	}
	if path == "" {
		fmt.Fprintln(os.Stderr, "svc init: no home directory to write the user config file to")
		return 1
	}
	if _, err := os.Stat(path); err == nil {
		fmt.Printf("config already exists at %s; left unchanged\n", path)
		return 0
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		fmt.Fprintf(os.Stderr, "svc init: %v\n", err)
		return 1
	}
	if err := os.WriteFile(path, []byte(initTemplate()), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "svc init: %v\n", err)
		return 1
	}
	fmt.Printf("wrote config to %s\n", path)
	if db := (&config.Config{}).SQLiteFile(); db != "" {
		fmt.Printf("svc will keep its data in %s (SVC_STORAGE_BACKEND=sqlite)\n", db)
	}
	return 0
}
