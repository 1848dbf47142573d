// The CRD schema generator: turns the workload operators' own API packages (the versions go.mod pins, a module of
// its own so that their newer k8s.io/api never moves the Kubernetes version toolchain/schemas claims) into
// policy/sources/kubernetes/crds.generated.ts: for each operator, every group, kind and version its API packages
// register (top-level objects, the ones with ObjectMeta), the shape of the object's `spec` as the operator decodes
// it (toolchain/shapegen with sigs.k8s.io/json's rules: json tags, inline structs promoted, case-sensitive; types
// with their own UnmarshalJSON are leaves; a struct named in `cycles` met again inside its own shape is `any`). Core
// Kubernetes types inside a spec (k8s.io/api, k8s.io/apimachinery) are not expanded: they are named leaves,
// core("core/v1.PodTemplateSpec"), judged against the claimed Kubernetes version by the pod readers.
//
// Usage: go run . > ../../policy/sources/kubernetes/crds.generated.ts  (toolchain/schemas.sh writes and checks it)
package main

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	wfv1alpha1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	sparkv1alpha1 "github.com/kubeflow/spark-operator/v2/api/v1alpha1"
	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	trainerv1alpha1 "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	tektonv1alpha1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1alpha1"
	tektonv1beta1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1beta1"
	knservingv1 "knative.dev/serving/pkg/apis/serving/v1"
	knservingv1beta1 "knative.dev/serving/pkg/apis/serving/v1beta1"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"sandbox-projects/toolchain/shapegen"
)

// The operators, by the name their verdict table goes by (policy/sources/kubernetes/crd-verdicts/<name>.ts): the
// Go module whose version go.mod pins, the API packages' scheme registrations and, when not every kind they register
// is one whose fields the project judges, the kinds that are (the others keep their kind verdicts, kinds.ts: an
// operator's internal state objects, which no user writes, fail closed there).
var operators = []struct {
	name, module string
	add          []func(*runtime.Scheme) error
	only         []string
}{
	{"agent-sandbox", "sigs.k8s.io/agent-sandbox", []func(*runtime.Scheme) error{sandboxv1beta1.AddToScheme, sandboxextv1beta1.AddToScheme}, nil},
	{"kuberay", "github.com/ray-project/kuberay/ray-operator", []func(*runtime.Scheme) error{rayv1.AddToScheme, rayv1alpha1.AddToScheme}, nil},
	{"kubeflow-trainer", "github.com/kubeflow/trainer/v2", []func(*runtime.Scheme) error{trainerv1alpha1.AddToScheme}, nil},
	{"argo-workflows", "github.com/argoproj/argo-workflows/v3", []func(*runtime.Scheme) error{wfv1alpha1.AddToScheme}, []string{"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"}},
	{"argo-rollouts", "github.com/argoproj/argo-rollouts", []func(*runtime.Scheme) error{rolloutsv1alpha1.AddToScheme}, nil},
	{"spark-operator", "github.com/kubeflow/spark-operator/v2", []func(*runtime.Scheme) error{sparkv1beta2.AddToScheme, sparkv1alpha1.AddToScheme}, []string{"SparkApplication", "ScheduledSparkApplication"}},
	// Tekton's CustomRun and Run go to custom task controllers, VerificationPolicy configures signature checks; they
	// keep their kind verdicts.
	{"tekton", "github.com/tektoncd/pipeline", []func(*runtime.Scheme) error{tektonv1.AddToScheme, tektonv1beta1.AddToScheme, tektonv1alpha1.AddToScheme}, []string{"Task", "Pipeline", "TaskRun", "PipelineRun", "StepAction"}},
	// Knative Serving's autoscaling and networking kinds (PodAutoscaler, Metric, the internal Ingress) are the
	// controller's own state, made from a Revision: their packages are not registered, they keep their kind verdicts.
	{"knative-serving", "knative.dev/serving", []func(*runtime.Scheme) error{knservingv1.AddToScheme, knservingv1beta1.AddToScheme}, []string{"Service", "Configuration", "Revision", "Route", "DomainMapping"}},
	// KEDA's eventing kinds (apis/eventing/v1alpha1: CloudEventSource, ClusterCloudEventSource) are not pinned: they
	// keep their kind verdicts.
	{"keda", "github.com/kedacore/keda/v2", []func(*runtime.Scheme) error{kedav1alpha1.AddToScheme}, nil},
}

// cycles are the structs that hold themselves: met again inside its own shape (Argo's DAG task's `inline`
// Template, Tekton's pipeline task's `pipelineSpec`), such a struct is a leaf, `any`; the walk does not enter it,
// and its field's verdict says what the operator does with it. Any other cycle stops the generator.
var cycles = []string{"v1alpha1.Template", "v1.PipelineSpec", "v1beta1.PipelineSpec"}

// decodesAs names the types whose own UnmarshalJSON decodes exactly another type's JSON: they are that type's shape,
// not leaves. Argo's ParallelSteps (a list of steps, each checked for keys outside WorkflowStep's, then decoded).
var decodesAs = map[string]reflect.Type{
	"v1alpha1.ParallelSteps": reflect.TypeOf([]wfv1alpha1.WorkflowStep{}),
}

// coreName names a core Kubernetes struct by its package under k8s.io/api or k8s.io/apimachinery (`core/v1`,
// `meta/v1`, `resource`), or "" for any other type.
func coreName(t reflect.Type) string {
	pkg := t.PkgPath()
	var rest string
	switch {
	case strings.HasPrefix(pkg, "k8s.io/api/"):
		rest = strings.TrimPrefix(pkg, "k8s.io/api/")
	case strings.HasPrefix(pkg, "k8s.io/apimachinery/pkg/apis/"):
		rest = strings.TrimPrefix(pkg, "k8s.io/apimachinery/pkg/apis/")
	case strings.HasPrefix(pkg, "k8s.io/apimachinery/"):
		rest = pkg[strings.LastIndex(pkg, "/")+1:]
	default:
		return ""
	}
	return rest + "." + t.Name()
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9]+`)

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	panic("no build info for " + path)
}

type kindSpec struct {
	group, kind, version string
	spec                 reflect.Type
}

// kinds lists the top-level object kinds (with ObjectMeta and a `spec`) the operator's packages register, only those
// named when only is not empty (each must be registered).
func kinds(add []func(*runtime.Scheme) error, only []string) []kindSpec {
	s := runtime.NewScheme()
	for _, a := range add {
		if err := a(s); err != nil {
			panic(err)
		}
	}
	objectMeta := reflect.TypeOf(metav1.ObjectMeta{})
	var out []kindSpec
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Group == "" || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		if len(only) > 0 && !slices.Contains(only, gvk.Kind) {
			continue
		}
		f, ok := t.FieldByName("ObjectMeta")
		if !ok || f.Type != objectMeta {
			continue
		}
		spec, ok := t.FieldByName("Spec")
		if !ok {
			panic(gvk.String() + " has no Spec")
		}
		out = append(out, kindSpec{gvk.Group, gvk.Kind, gvk.Version, spec.Type})
	}
	for _, k := range only {
		if !slices.ContainsFunc(out, func(s kindSpec) bool { return s.kind == k }) {
			panic("no registered kind " + k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.group+"/"+a.kind+"/"+a.version < b.group+"/"+b.kind+"/"+b.version
	})
	return out
}

func main() {
	g := shapegen.New(true)
	// A struct inside itself (Tekton's pipeline task's own pipelineSpec) is written as any: its verdict judges it
	// whole, and the walk reads nothing under it.
	g.Leaf = func(t reflect.Type) (string, bool) {
		if t.Kind() != reflect.Struct {
			return "", false
		}
		if n := coreName(t); n != "" {
			return fmt.Sprintf("core(%q)", n), true
		}
		if d, ok := decodesAs[t.String()]; ok {
			return g.Shape(d), true
		}
		return "", false
	}
	g.Cycle = func(t reflect.Type) (string, bool) { return "any", slices.Contains(cycles, t.String()) }
	var body bytes.Buffer
	var mods []string
	for _, op := range operators {
		ver := moduleVersion(op.module)
		mods = append(mods, op.module+" "+ver)
		g.Name = func(t reflect.Type) string {
			rel := strings.TrimPrefix(strings.TrimPrefix(t.PkgPath(), op.module), "/")
			return nonIdent.ReplaceAllString(op.name+"_"+rel, "_") + "_" + t.Name()
		}
		fmt.Fprintf(&body, "  %q: {\n    module: %q,\n    version: %q,\n    kinds: {\n", op.name, op.module, ver)
		lastGroup, lastKind := "", ""
		for _, k := range kinds(op.add, op.only) {
			if k.group != lastGroup || k.kind != lastKind {
				if lastKind != "" {
					body.WriteString(" },\n")
				}
				if k.group != lastGroup {
					if lastGroup != "" {
						body.WriteString("      },\n")
					}
					fmt.Fprintf(&body, "      %q: {\n", k.group)
				}
				fmt.Fprintf(&body, "        %s: {", k.kind)
				lastGroup, lastKind = k.group, k.kind
			}
			expr := g.Shape(k.spec)
			g.Roots = append(g.Roots, expr)
			fmt.Fprintf(&body, " %s: %s,", shapegen.TSKey(k.version), expr)
		}
		body.WriteString(" },\n")
		body.WriteString("      },\n    },\n  },\n")
	}
	var b bytes.Buffer
	api := moduleVersion("k8s.io/api")
	fmt.Fprintf(&b, `// GENERATED by toolchain/crds from %s (with k8s.io/api %s). Do not edit: run `+"`npm run schemas`"+`.
// test/policy/sources/docker/schema.test.ts fails when this file is not what the generator writes.
import { %s, type Shape } from "../docker/shape";

`, strings.Join(mods, ", "), api, g.Imports())
	for _, c := range g.Order {
		fmt.Fprintf(&b, "const %s: Shape = %s;\n", c, g.Defs[c])
	}
	b.WriteString(`
/**
 * The operators whose CRD schemas the project claims, by the name of their verdict table: the Go module and version
 * the schemas come from, and the ` + "`spec`" + ` of every kind they register: group -> kind -> version -> shape.
 */
export const CRD_SCHEMAS = {
`)
	b.Write(body.Bytes())
	b.WriteString("} as const satisfies Readonly<Record<string, { module: string; version: string; kinds: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, Shape>>>>>> }>>;\n")
	os.Stdout.Write(b.Bytes())
}
