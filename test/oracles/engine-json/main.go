// Oracle: decodes Docker Engine API create bodies exactly as the daemon's router does (docker v28.5.2,
// runconfig.decodeContainerConfig: encoding/json's Decoder into container.CreateRequest, nothing stricter) and
// prints what it decoded, with the API's canonical field names.
//
// Standard input: a JSON array of texts, each one request body as sent (repeated keys and key case kept).
// Standard output: a JSON array of answers {"body": <the decoded CreateRequest>, "error": "<decoder error>"}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/docker/docker/api/types/container"
)

type answer struct {
	Body  *container.CreateRequest `json:"body"`
	Error string                   `json:"error,omitempty"`
}

func decode(body string) answer {
	var w container.CreateRequest
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&w); err != nil {
		return answer{Body: &w, Error: err.Error()}
	}
	if dec.More() {
		return answer{Body: &w, Error: "unexpected content after JSON"}
	}
	return answer{Body: &w}
}

func main() {
	var cases []string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := make([]answer, len(cases))
	for i, c := range cases {
		out[i] = decode(c)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
