// Oracle: reads YAML or JSON streams as `kubectl apply -f` reads a file, and prints the objects it would send.
//
// The stream goes through what cli-runtime's resource builder runs (k8s.io/apimachinery and k8s.io/cli-runtime
// v0.36.3, the versions k8s.io/kubernetes v1.36.3 builds with): the file reader's BOM transform, StreamVisitor's
// YAMLOrJSONDecoder (YAMLReader splits YAML at `---` lines; each piece is decoded by sigs.k8s.io/yaml, which reads
// its first YAML document), the unstructured decoder (an object with an `items` key is a List whose kind-less items
// take the List's kind and apiVersion), and FlattenListVisitor (a List is replaced by its items, nested Lists too;
// each item needs a kind and a version). kubectl's client-side schema check and the cluster's REST mapping are not
// run: the answer is what the decoding lets through, the most a cluster could be sent.
//
// Standard input: a JSON array of stream texts. Standard output: a JSON array of answers
// {"objects": [{"group", "version", "kind", "object"}], "errors": ["..."]}; a stream error ends the stream, as it
// ends kubectl's reading of the file.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/resource"
)

type object struct {
	Group   string          `json:"group"`
	Version string          `json:"version"`
	Kind    string          `json:"kind"`
	Object  json.RawMessage `json:"object"`
}

type answer struct {
	Objects []object `json:"objects"`
	Errors  []string `json:"errors"`
}

func read(text string) (a answer) {
	a = answer{Objects: []object{}, Errors: []string{}}
	defer func() {
		if r := recover(); r != nil {
			a.Errors = append(a.Errors, fmt.Sprintf("panic: %v", r))
		}
	}()
	// cli-runtime FileVisitor reads a file through a BOM-honouring UTF-8 decoder; Stream does not, so it is added.
	r := transform.NewReader(bytes.NewReader([]byte(text)), unicode.BOMOverride(unicode.UTF8.NewDecoder()))
	// `kubectl apply -f` builds the same chain (Unstructured, ContinueOnError, Flatten) with a REST mapper; the local
	// builder leaves the mapping out, so the objects are what the decoding lets through.
	err := resource.NewLocalBuilder().
		Unstructured().
		ContinueOnError().
		Stream(r, "stdin").
		Flatten().
		Do().
		Visit(func(info *resource.Info, err error) error {
			if err != nil {
				return err
			}
			gvk := info.Object.GetObjectKind().GroupVersionKind()
			raw, err := json.Marshal(info.Object)
			if err != nil {
				return err
			}
			a.Objects = append(a.Objects, object{gvk.Group, gvk.Version, gvk.Kind, raw})
			return nil
		})
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			a.Errors = append(a.Errors, e.Error())
		}
	} else if err != nil {
		a.Errors = append(a.Errors, err.Error())
	}
	return a
}

func main() {
	var cases []string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading cases:", err)
		os.Exit(2)
	}
	answers := make([]answer, len(cases))
	for i, c := range cases {
		answers[i] = read(c)
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintln(os.Stderr, "writing answers:", err)
		os.Exit(2)
	}
}
