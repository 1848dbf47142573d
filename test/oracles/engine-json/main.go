// Oracle: decodes Docker Engine API create bodies exactly as the daemon's router does at the Engine API version the
// project claims (github.com/moby/moby/api, the version toolchain/schemas pins: encoding/json's Decoder into
// container.CreateRequest, nothing stricter) and prints what it decoded, with the API's canonical field names.
//
// One widening, the same the readers make (policy/sources/docker/schema.ts): Cmd, Entrypoint, Shell,
// HostConfig.CapAdd and HostConfig.CapDrop take one text as a one-element list, as every daemon up to v28 decoded
// them (strslice.StrSlice); shallower fields shadow the embedded ones, as encoding/json promotes them.
//
// Standard input: a JSON array of texts, each one request body as sent (repeated keys and key case kept).
// Standard output: a JSON array of answers {"body": <the decoded CreateRequest>, "error": "<decoder error>"}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
)

// strSlice is docker v28's strslice.StrSlice: a list of texts, or one text.
type strSlice []string

func (e *strSlice) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	p := make([]string, 0, 1)
	if err := json.Unmarshal(b, &p); err != nil {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p = append(p, s)
	}
	*e = p
	return nil
}

type hostConfig struct {
	*container.HostConfig
	CapAdd  strSlice
	CapDrop strSlice
}

type createRequest struct {
	*container.Config
	Cmd              strSlice
	Entrypoint       strSlice
	Shell            strSlice                  `json:",omitempty"`
	HostConfig       *hostConfig               `json:"HostConfig,omitempty"`
	NetworkingConfig *network.NetworkingConfig `json:"NetworkingConfig,omitempty"`
}

type answer struct {
	Body  *createRequest `json:"body"`
	Error string         `json:"error,omitempty"`
}

func decode(body string) answer {
	var w createRequest
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
