package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"svc/help"
)

func runHelp(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = helpTo(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHelpWordsEqualDottedName(t *testing.T) {
	for _, pair := range [][2][]string{
		{{"config", "http"}, {"config.http"}},
		{{"auth", "trusted-keys"}, {"auth.trusted-keys"}},
		{{"errors", "MODEL_NOT_FOUND"}, {"errors.MODEL_NOT_FOUND"}},
		{{"errors", "model_not_found"}, {"errors.MODEL_NOT_FOUND"}},
	} {
		c1, out1, err1 := runHelp(pair[0]...)
		c2, out2, _ := runHelp(pair[1]...)
		if c1 != 0 || c2 != 0 || err1 != "" {
			t.Errorf("svc help %v / %v: exit %d / %d, stderr %q", pair[0], pair[1], c1, c2, err1)
			continue
		}
		if out1 != out2 || out1 == "" {
			t.Errorf("svc help %s differs from svc help %s", strings.Join(pair[0], " "), strings.Join(pair[1], " "))
		}
	}
	_, out, _ := runHelp("config", "http")
	tp, _ := help.Default().Get("config.http")
	if !strings.HasPrefix(out, tp.Title+"\n") || !strings.Contains(out, "SVC_HTTP_PORT") {
		t.Errorf("svc help config http does not render config.http:\n%.300s", out)
	}
	if strings.Contains(out, "```") || strings.Contains(out, "\n## ") {
		t.Errorf("Markdown fences or headings left in the terminal rendering:\n%s", out)
	}
}

func TestHelpIndexListsEveryTopic(t *testing.T) {
	code, out, errOut := runHelp()
	if code != 0 || errOut != "" {
		t.Fatalf("svc help: exit %d, stderr %q", code, errOut)
	}
	for _, tp := range help.Default().Topics {
		if !strings.Contains(out, "  "+tp.Topic+" ") {
			t.Errorf("svc help does not list %s", tp.Topic)
		}
	}
}

func TestHelpParentListsSubtopics(t *testing.T) {
	_, out, _ := runHelp("config")
	i := strings.Index(out, "SUBTOPICS")
	if i < 0 {
		t.Fatalf("svc help config has no SUBTOPICS:\n%s", out)
	}
	for _, g := range []string{"http", "storage", "auth", "database", "search", "scheduler", "cluster", "grpc", "cors", "admin"} {
		if !strings.Contains(out[i:], "config."+g) {
			t.Errorf("svc help config does not list config.%s", g)
		}
	}
}

func TestHelpUnknownTopicExits1(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"config", "nope"}, {"config.http.x"}, {"."}} {
		code, out, errOut := runHelp(args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "no such topic") {
			t.Errorf("svc help %q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestHelpExitStatusOfBinary runs the built binary, so the status is the
// process's, through main and the command dispatch.
func TestHelpExitStatusOfBinary(t *testing.T) {
	t.Parallel()
	bin := svcBinary(t)
	cmd := exec.Command(bin, "help", "no-such-topic")
	cmd.Env = cleanEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("svc help no-such-topic: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), `no such topic "no-such-topic"`) {
		t.Errorf("stderr %q", stderr.String())
	}

	a := exec.Command(bin, "help", "config", "http")
	a.Env = cleanEnv(t)
	outA, errA := a.Output()
	b := exec.Command(bin, "help", "config.http")
	b.Env = cleanEnv(t)
	outB, errB := b.Output()
	if errA != nil || errB != nil || !bytes.Equal(outA, outB) || len(outA) == 0 {
		t.Errorf("svc help config http (%v) and svc help config.http (%v) differ", errA, errB)
	}
}

// TestHelpListsCommandsFirst: `svc help` names every subcommand before the
// topic tree.
func TestHelpListsCommandsFirst(t *testing.T) {
	_, out, _ := runHelp()
	topics := strings.Index(out, "svc help topics")
	if !strings.HasPrefix(out, "usage: svc [command]") || topics < 0 {
		t.Fatalf("svc help starts %.200q", out)
	}
	// Every command run dispatches is listed (issue 26: import and export
	// were missing).
	listed := map[string]bool{}
	for _, c := range commands {
		name, _, _ := strings.Cut(c.name, " ")
		listed[name] = true
	}
	for _, name := range []string{"serve", "version", "help", "health", "init", "migrate", "backup", "import", "export"} {
		if !listed[name] {
			t.Errorf("svc help does not list %s", name)
		}
	}
	for _, c := range commands {
		name, _, _ := strings.Cut(c.name, " ")
		if i := strings.Index(out, "  "+name+" "); i < 0 || i > topics {
			t.Errorf("command %s not listed before the topics", name)
		}
	}
}

// TestImportUsageRendersFlagNames: the flag package turns a back-quoted
// word of a usage string into the flag's argument name; `svc import -h`
// printed "-restore svc export --all" (issue 26).
func TestImportUsageRendersFlagNames(t *testing.T) {
	for _, cmd := range []func([]string, *strings.Builder) int{
		func(a []string, w *strings.Builder) int { return importCmd(a, strings.NewReader(""), w, w) },
		func(a []string, w *strings.Builder) int { return exportCmd(a, w, w) },
	} {
		var out strings.Builder
		cmd([]string{"-h"}, &out)
		s := out.String()
		if strings.Contains(s, "-restore svc") || strings.Contains(s, "svc export --all`") {
			t.Errorf("usage renders a sentence as an argument name:\n%s", s)
		}
		for _, line := range strings.Split(s, "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && strings.Count(f, " ") > 1 && !strings.Contains(line, "\t") {
				t.Errorf("flag line %q: more than a name and an argument", line)
			}
		}
	}
	var out strings.Builder
	importCmd([]string{"-h"}, strings.NewReader(""), &out, &out)
	if !strings.Contains(out.String(), "-restore DIR") {
		t.Errorf("svc import -h lacks -restore DIR:\n%s", out.String())
	}
}
