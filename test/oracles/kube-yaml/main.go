// Oracle: converts YAML documents to JSON exactly as kubectl and the API server do (sigs.k8s.io/yaml YAMLToJSON over
// go.yaml.in/yaml/v2, the versions k8s.io/kubernetes v1.36.3 builds with) and prints the JSON, or the error.
//
// Standard input: a JSON array of YAML texts (one document each). Standard output: a JSON array of answers
// {"json": <the converted value>} or {"error": "..."}.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

type answer struct {
	JSON  json.RawMessage `json:"json,omitempty"`
	Error string          `json:"error,omitempty"`
}

func convert(text string) (a answer) {
	// The decoder panics on nothing it is given, but a case must never take the whole batch down.
	defer func() {
		if r := recover(); r != nil {
			a = answer{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	out, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{JSON: out}
}

func main() {
	var cases []string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading cases:", err)
		os.Exit(2)
	}
	answers := make([]answer, len(cases))
	for i, c := range cases {
		answers[i] = convert(c)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintln(os.Stderr, "writing answers:", err)
		os.Exit(2)
	}
}
