// The Pulumi CLI's reading of a --policy-pack-config file, with the very code the engine runs
// (pkg/v3/resource/analyzer): parse the file, reconcile it with the pack's policies (defaults, "all", per-policy
// levels and properties) and validate each policy's properties against its config schema.
//
// stdin: a JSON array of cases { "policies": [{ name, enforcementLevel, configSchema }], "config": "<file text>" }.
// stdout: a JSON array of answers { "error"?, "validationErrors"?, "config"?: { name: { enforcementLevel, properties } } }.
package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi/pkg/v3/resource/analyzer"
	"github.com/pulumi/pulumi/pkg/v3/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

type policyIn struct {
	Name             string                             `json:"name"`
	EnforcementLevel string                             `json:"enforcementLevel"`
	ConfigSchema     *plugin.AnalyzerPolicyConfigSchema `json:"configSchema"`
}

type caseIn struct {
	Policies []policyIn `json:"policies"`
	Config   string     `json:"config"`
}

type policyOut struct {
	EnforcementLevel string         `json:"enforcementLevel"`
	Properties       map[string]any `json:"properties"`
}

type answer struct {
	Error            string               `json:"error,omitempty"`
	ValidationErrors []string             `json:"validationErrors,omitempty"`
	Config           map[string]policyOut `json:"config,omitempty"`
}

func run(dir string, i int, c caseIn) answer {
	// The engine reads the config from a file; so does the oracle.
	file := filepath.Join(dir, "config.json")
	if err := os.WriteFile(file, []byte(c.Config), 0o600); err != nil {
		return answer{Error: err.Error()}
	}
	cfg, err := analyzer.LoadPolicyPackConfigFile(file)
	if err != nil {
		return answer{Error: err.Error()}
	}
	policies := make([]plugin.AnalyzerPolicyInfo, 0, len(c.Policies))
	for _, p := range c.Policies {
		policies = append(policies, plugin.AnalyzerPolicyInfo{
			Name:             p.Name,
			EnforcementLevel: apitype.EnforcementLevel(p.EnforcementLevel),
			ConfigSchema:     p.ConfigSchema,
		})
	}
	result, validationErrors, err := analyzer.ReconcilePolicyPackConfig(policies, nil, cfg.Config)
	if err != nil {
		return answer{Error: err.Error()}
	}
	if len(validationErrors) > 0 {
		return answer{ValidationErrors: validationErrors}
	}
	out := map[string]policyOut{}
	for k, v := range result {
		out[k] = policyOut{EnforcementLevel: string(v.EnforcementLevel), Properties: v.Properties}
	}
	return answer{Config: out}
}

func main() {
	var cases []caseIn
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "packconfig-oracle-")
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(2)
	}
	defer os.RemoveAll(dir)
	answers := make([]answer, 0, len(cases))
	for i, c := range cases {
		answers = append(answers, run(dir, i, c))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(2)
	}
}
