// Oracle: loads Compose projects exactly as `docker compose config` does (compose-go v2 with the same options:
// the given environment first, then the project folder's .env, path resolution, normalization) and prints each
// project's normalized model as JSON, or the loader's error.
//
// Standard input: a JSON array of cases {"files": {"<relative path>": "<text>"}, "env": {...}, "main": "<file>"}.
// Standard output: a JSON array of answers {"project": {...}} or {"error": "..."}. The temporary folder that holds
// each case's files is written as /ROOT in the answers (its parent as /), so callers can compare paths.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/sirupsen/logrus"
)

type testCase struct {
	Files map[string]string `json:"files"`
	Env   map[string]string `json:"env"`
	Main  string            `json:"main"`
}

type answer struct {
	Project json.RawMessage `json:"project,omitempty"`
	Error   string          `json:"error,omitempty"`
}

func load(c testCase) answer {
	dir, err := os.MkdirTemp("", "compose-oracle-")
	if err != nil {
		return answer{Error: err.Error()}
	}
	defer os.RemoveAll(dir)
	// Resolve symbolic links so that the paths the loader prints start with dir.
	tmp, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return answer{Error: err.Error()}
	}
	// The project sits in <tmp>/ROOT and <tmp> is cut from the answers: the project folder reads /ROOT and its
	// parent reads /, as the tests' in-memory files do.
	dir = filepath.Join(tmp, "ROOT")
	for name, text := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return answer{Error: err.Error()}
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return answer{Error: err.Error()}
		}
	}
	// `~` is expanded from the process's HOME (os.UserHomeDir): the case's HOME stands for it.
	if home, ok := c.Env["HOME"]; ok {
		os.Setenv("HOME", home)
	}
	env := make([]string, 0, len(c.Env))
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	main := c.Main
	if main == "" {
		main = "compose.yaml"
	}
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(dir, filepath.FromSlash(main))},
		// The case's environment stands for the operating system's (it always wins over .env).
		cli.WithEnv(env),
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		// Every profile: the scan judges services a profile would start too.
		cli.WithDefaultProfiles("*"),
		cli.WithName("oracle"),
	)
	if err != nil {
		return answer{Error: strings.ReplaceAll(err.Error(), tmp, "")}
	}
	project, err := cli.ProjectFromOptions(context.Background(), opts)
	if err != nil {
		return answer{Error: strings.ReplaceAll(err.Error(), tmp, "")}
	}
	b, err := json.Marshal(project)
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{Project: json.RawMessage(strings.ReplaceAll(string(b), tmp, ""))}
}

func main() {
	logrus.SetOutput(os.Stderr)
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := make([]answer, len(cases))
	for i, c := range cases {
		out[i] = load(c)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
